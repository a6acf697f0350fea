"""The snapshot gate's judge end to end: a judge that answers nonsense, has no key, or cannot
be reached never lets a change pass silently; decided verdicts are cached."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from pathlib import Path

from proveai.providers.openai import OpenAICompatibleProvider
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import (
    edit,
    git,
    pinned_project,
    table_rows,
    verdicts_of,
)


def test_judge_unavailable_warns_or_fails_strict(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
    # the judge answers, over real HTTP, with something that is not a verdict
    server.reply_fn = lambda request: (
        "I'd rather not say." if "You compare two outputs" in request.system else None
    )
    loose = cli("snapshot", "verify", env=env)
    assert loose.returncode == 0, (loose.stdout, loose.stderr)
    assert "could not grade" in loose.stderr and "did NOT check" in loose.stderr
    assert "inconclusive" in table_rows(loose.stdout)["draft"]
    assert "malformed judge reply" in verdicts_of(project, loose.stdout)["draft"]["rationale"]

    # no key for the judge's provider, strict through PROVEAI_STRICT_JUDGE (the flag: below)
    no_key = {**env, "PROVEAI_JUDGE_MODEL": "claude-haiku-4-5", "PROVEAI_STRICT_JUDGE": "1"}
    strict_env = cli("snapshot", "verify", env=no_key)
    assert strict_env.returncode == 3, (strict_env.stdout, strict_env.stderr)
    assert "ANTHROPIC_API_KEY" in verdicts_of(project, strict_env.stdout)["draft"]["rationale"]

    hash_only = cli("snapshot", "verify", "--no-judge", env=env)
    assert hash_only.returncode == 2, (hash_only.stdout, hash_only.stderr)
    assert "hash-only" in hash_only.stderr
    assert cli("snapshot", "verify", env={**env, "PROVEAI_NO_JUDGE": "1"}).returncode == 2


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unreachable_judge_never_passes_silently(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    # the last agent only, so one judge call per verify (each one retries with backoff)
    edit(project / "pipeline.py", "answer OK or list them", "answer OK or list the worst one")
    # the judge's model goes to the built-in OpenAI provider, pointed at a closed port:
    # connection refused on every retry
    dead = {
        **env,
        "PROVEAI_JUDGE_MODEL": "o3-mini",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1",
        "OPENAI_API_KEY": "test-key",
        "PROVEAI_PROVIDER_BACKOFF": "0.01",  # every retry still happens, without the waits
    }
    loose = cli("snapshot", "verify", env=dead)
    assert loose.returncode == 0, (loose.stdout, loose.stderr)
    assert "warning:" in loose.stderr and "did NOT check" in loose.stderr
    assert "--strict-judge makes this exit 3" in loose.stderr
    assert "inconclusive" in table_rows(loose.stdout)["qa_check"]
    rationale = verdicts_of(project, loose.stdout)["qa_check"]["rationale"]
    assert rationale.startswith("judge unavailable") and "127.0.0.1" in rationale, rationale
    strict = cli("snapshot", "verify", "--strict-judge", env=dead)
    assert strict.returncode == 3, (strict.stdout, strict.stderr)
    assert "inconclusive" in table_rows(strict.stdout)["qa_check"]
    metrics_run = next(w for w in strict.stdout.split() if w.startswith("verify-"))
    metrics = json.loads((project / "proveai" / "runs" / metrics_run / "metrics.json").read_text())
    assert metrics["exit_code"] == 3 and metrics["counts"].get("inconclusive", 0) >= 1


def test_judge_cache_makes_second_verify_free(project: Path, server: ModelServer, home: Path) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")
    assert cli("snapshot", "verify", env=env).returncode == 1
    judge_requests = [r for r in server.chat_requests() if "You compare two outputs" in r.system]
    assert judge_requests
    again = cli("snapshot", "verify", env=env)
    assert again.returncode == 1
    assert len([r for r in server.chat_requests() if "You compare two outputs" in r.system]) == len(
        judge_requests
    )
    cache = json.loads((project / "proveai" / "snapshots" / ".judge_cache.json").read_text())
    assert any(key.endswith("|gpt-4o-mini") for key in cache)
    # git sees the snapshot but not the cache
    status = git(project, "status", "--porcelain", "--untracked-files=all")
    assert "proveai/snapshots/latest.json" in status and ".judge_cache.json" not in status


class HangUp:
    """A loopback TCP listener that accepts and at once closes every connection, counting them."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed by __exit__
            self.accepted += 1
            conn.close()

    def __enter__(self) -> HangUp:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # close() alone does not wake a thread blocked in accept() on Linux: the join would
        # wait out its whole timeout; shutdown() does
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(timeout=5)


def test_a_judge_that_hangs_up_is_tried_once_per_verify(
    project: Path, server: ModelServer, home: Path
) -> None:
    cli, env = pinned_project(project, server, home)
    edit(project / "pipeline.py", "Draft a short, polite reply", "Draft a curt reply")  # two agents change
    with HangUp() as judge:
        dead = {
            **env,
            "PROVEAI_JUDGE_MODEL": "o3-mini",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{judge.port}/v1",
            "OPENAI_API_KEY": "test-key",
            "PROVEAI_PROVIDER_BACKOFF": "0.01",  # every retry still happens, without the waits
        }
        loose = cli("snapshot", "verify", env=dead)
    assert loose.returncode == 0, (loose.stdout, loose.stderr)
    verdicts = verdicts_of(project, loose.stdout)
    assert verdicts["draft"]["status"] == verdicts["qa_check"]["status"] == "inconclusive"
    assert verdicts["draft"]["rationale"] == verdicts["qa_check"]["rationale"]
    # one judge call's attempts (the provider's retries), not one call per changed agent
    assert judge.accepted == OpenAICompatibleProvider().max_retries + 1
    assert "2 agent(s) changed but the judge could not grade them" in loose.stderr
