"""A fake model server on 127.0.0.1 for tests: OpenAI and Anthropic wire formats, for real over HTTP.

Usage (any test folder may import it)::

    from tests.proveai.model_server import ModelServer

    with ModelServer(mode="deterministic") as server:
        provider = OpenAICompatibleProvider(base_url=server.openai_url)   # .../v1
        anthropic = AnthropicProvider(api_key="k", base_url=server.anthropic_url)
        ...
        assert server.count("/v1/chat/completions") == 1

Endpoints: POST /v1/chat/completions, POST /v1/embeddings, POST /v1/messages.

Modes (how a chat reply's text is chosen when nothing is scripted):
- "deterministic": derived from a hash of (model, messages, kwargs) -> same request, same text.
- "noisy": one of several paraphrases of the deterministic answer, chosen by a RNG seeded
  with `seed` and the request's position, so a run is reproducible but replies vary.
- "echo": the last user message's content, verbatim.

Per-request behaviour can be scripted, first in first out, with `server.enqueue(Reply(...))`:
status codes (429 with Retry-After, 5xx), malformed bodies, delays (slow replies) or exact
text. `server.reply_fn = lambda request: str | None` overrides the text for chosen requests.
Judge requests (proveai's judge prompt) get `{"verdict": server.judge_verdict, ...}` in a
```json fence unless scripted otherwise.

The judge is competent on proveai's built-in fitness pairs (it answers each one right) unless
`server.judge_style` says otherwise: "ramble" answers every judge request like a small local
model that never closes its JSON (a long prose reply cut at the request's max_tokens),
"nonsense" answers the fitness pairs wrong ("equivalent" for everything).

Embeddings are a hashed bag of words (dimension 64, L2-normalised): texts sharing words are
close, unrelated texts far, identical texts identical.

`server.requests` records every request (path, JSON body, headers with lower-case names);
`count(path)` counts them.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JUDGE_MARKER = "You compare two outputs"
PARAPHRASES = (
    "{answer}",
    "Sure. {answer}",
    "{answer} Let me know if you need anything else.",
    "In short: {answer}",
)


@dataclass
class Reply:
    """One scripted reply. `body` (a dict or raw str) wins over `text`; `delay_s` sleeps first."""

    status: int = 200
    text: str | None = None
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Request:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def system(self) -> str:
        if isinstance(self.body.get("system"), str):
            return self.body["system"]
        return "\n".join(str(m.get("content")) for m in self.messages if m.get("role") == "system")


WORDS = (
    "amber", "birch", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper",
    "kelp", "lagoon", "meadow", "nickel", "orchid", "pebble", "quartz", "river", "saffron", "tundra",
    "umber", "violet", "willow", "xenon", "yarrow", "zephyr", "canyon", "summit", "prairie", "glacier",
    "lantern", "compass",
)


def deterministic_answer(model: str, messages: Any, kwargs: dict[str, Any]) -> str:
    """Five words chosen by a hash of the request: same request, same words."""
    digest = hashlib.sha256(json.dumps([model, messages, kwargs], sort_keys=True).encode()).digest()
    return "Answer: " + " ".join(WORDS[b % len(WORDS)] for b in digest[:5]) + "."


def hashed_embedding(text: str, dim: int = 64) -> list[float]:
    vector = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % dim] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class ModelServer:
    """A ThreadingHTTPServer on 127.0.0.1 (free port), started on enter, stopped on exit."""

    def __init__(
        self, mode: str = "deterministic", *, seed: int = 0, judge_verdict: str = "equivalent"
    ) -> None:
        if mode not in ("deterministic", "noisy", "echo"):
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        self.seed = seed
        self.judge_verdict = judge_verdict
        self.judge_rationale = "the outputs say the same thing"
        self.judge_style = "json"  # json | ramble | nonsense
        self.reply_fn: Callable[[Request], str | None] | None = None
        self.requests: list[Request] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle --------------------------------------------------------------------------
    def start(self) -> ModelServer:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- addresses --------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAICompatibleProvider / embeddings (ends in /v1)."""
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        """Base URL for AnthropicProvider (it appends /v1/messages)."""
        return self.url

    # ---- scripting and inspection ------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def count(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def chat_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path in ("/v1/chat/completions", "/v1/messages")]

    # ---- reply logic ------------------------------------------------------------------------
    def judge_text(self, request: Request) -> str:
        return _judge_text(self, request)

    def _next_scripted(self) -> Reply | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    def answer_text(self, request: Request, position: int) -> str:
        if self.reply_fn is not None:
            text = self.reply_fn(request)
            if text is not None:
                return text
        if JUDGE_MARKER in request.system:
            return self.judge_text(request)
        skip = ("model", "messages", "system", "max_tokens")
        kwargs = {k: v for k, v in request.body.items() if k not in skip}
        messages = request.messages
        if request.path == "/v1/messages" and request.body.get("system"):
            messages = [{"role": "system", "content": request.body["system"]}, *messages]
        if self.mode == "echo":
            users = [m for m in messages if m.get("role") == "user"]
            return str(users[-1].get("content")) if users else ""
        answer = deterministic_answer(str(request.body.get("model")), messages, kwargs)
        if self.mode == "noisy":
            rng = random.Random(f"{self.seed}:{position}")
            return rng.choice(PARAPHRASES).format(answer=answer)
        return answer


RAMBLE = (
    "Sure! Let me think about this step by step. The OLD output and the NEW output are both "
    "responses to the customer, and when we compare them we should look at the tone, the facts, "
    'the decision and the structure. {"verdict": "equi'
)


def fitness_probe(request: Request) -> str | None:
    """The right verdict when `request` asks the judge one of proveai's known pairs, else None
    (a test's own judge `reply_fn` returns None for these to keep the judge competent)."""
    from proveai.diff.judge import FITNESS_PAIRS

    user = next((str(m.get("content")) for m in request.messages if m.get("role") == "user"), "")
    for _, old, new, expected in FITNESS_PAIRS:
        if f"OLD OUTPUT:\n{old}\n" in user and f"NEW OUTPUT:\n{new}\n" in user:
            return expected
    return None


def _judge_text(server: ModelServer, request: Request) -> str:
    """The judge's reply: right on the fitness pairs, the scripted verdict otherwise."""
    if server.judge_style == "ramble":
        words = RAMBLE.split()
        cap = int(request.body.get("max_tokens") or 2000)
        return " ".join((words * (1 + cap // len(words)))[: max(1, cap)])
    verdict = server.judge_verdict
    expected = fitness_probe(request)
    if expected is not None:
        verdict = "equivalent" if server.judge_style == "nonsense" else expected
    payload = {"verdict": verdict, "confidence": 0.9, "rationale": server.judge_rationale}
    return "```json\n" + json.dumps(payload) + "\n```"


def _make_handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in two writes: with Nagle on, the body waits for the client's
        # delayed ACK (~40 ms a reply), which is most of a fake model call's time
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            headers = {k.lower(): v for k, v in self.headers.items()}
            request = Request(self.path, body if isinstance(body, dict) else {}, headers)
            with server._lock:
                server.requests.append(request)
                position = len(server.requests)
            scripted = server._next_scripted()
            if scripted and scripted.delay_s:
                time.sleep(scripted.delay_s)
            if scripted and (scripted.status != 200 or scripted.body is not None):
                body_out = scripted.body if scripted.body is not None else {"error": "scripted"}
                self._send(scripted.status, body_out, scripted.headers)
                return
            if self.path == "/v1/embeddings":
                inputs = body.get("input")
                texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
                data = [{"object": "embedding", "index": i, "embedding": hashed_embedding(str(t))}
                        for i, t in enumerate(texts)]
                self._send(200, {"object": "list", "data": data, "model": body.get("model")})
                return
            if scripted and scripted.text is not None:
                text = scripted.text
            else:
                text = server.answer_text(request, position)
            model = str(body.get("model"))
            words_in = len(json.dumps(body.get("messages"))) // 4
            words_out = max(1, len(text) // 4)
            if self.path == "/v1/chat/completions":
                self._send(200, {
                    "id": f"chatcmpl-{position}", "object": "chat.completion", "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": words_in, "completion_tokens": words_out},
                })
            elif self.path == "/v1/messages":
                self._send(200, {
                    "id": f"msg_{position}", "type": "message", "role": "assistant", "model": model,
                    "content": [{"type": "text", "text": text}],
                    "usage": {"input_tokens": words_in, "output_tokens": words_out},
                })
            else:
                self._send(404, {"error": f"no route {self.path}"})

        def _send(
            self, status: int, body: dict[str, Any] | str, headers: dict[str, str] | None = None
        ) -> None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

    return Handler
