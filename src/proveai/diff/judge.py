"""Tier 3: llm_judge — one structured-JSON prompt, code-fence tolerant, never raises.

The model is `model`, else $PROVEAI_JUDGE_MODEL read at call time, else claude-haiku-4-5; each
request's max_tokens is `max_tokens`, else $PROVEAI_JUDGE_MAX_TOKENS, else 200. Calls go
through a CachedProvider, so a repeated judgement costs nothing. A caller that wants the cost
of its judgements passes its own `JudgeStats`, which the calls count into.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prove_common.text import value_as_text
from proveai.cache import CachedProvider, ResponseCache, default_cache, dispatch_cached
from proveai.providers.base import Provider

DEFAULT_JUDGE_MODEL = "claude-haiku-4-5"
# a verdict object is ~40 tokens: a small cap stops a model that never closes its JSON from
# generating to its context limit (tens of seconds per judged output on a small local model)
DEFAULT_JUDGE_MAX_TOKENS = 200
DEFAULT_JUDGE_RETRIES = 1  # extra attempts after a reply that is not a verdict
VERDICTS = ("equivalent", "better", "worse")
MAX_FIELD_CHARS = 6000

JUDGE_SYSTEM = (
    "You compare two outputs of the same step of an AI pipeline, produced for the same input: "
    "OLD (known good) and NEW (after a change). Decide whether NEW is equivalent to OLD (same "
    "facts, same decision, only wording differs), better, or worse (wrong or missing facts, "
    "numbers changed, a lost instruction, a different decision, unsafe). Reply with one JSON "
    'object only: {"verdict": "equivalent" | "better" | "worse", "confidence": <0.0 to 1.0>, '
    '"rationale": "<one short sentence>"}'
)


def judge_model_name(model: str | None = None) -> str:
    return model or os.environ.get("PROVEAI_JUDGE_MODEL") or DEFAULT_JUDGE_MODEL


def judge_max_tokens(env: Mapping[str, str] | None = None) -> int:
    """$PROVEAI_JUDGE_MAX_TOKENS in `env` (the process environment by default), else 200."""
    return _env_int(env, "PROVEAI_JUDGE_MAX_TOKENS", DEFAULT_JUDGE_MAX_TOKENS, minimum=1)


def judge_retries() -> int:
    """$PROVEAI_JUDGE_RETRIES: how many times a malformed reply is asked again (default 1)."""
    return _env_int(None, "PROVEAI_JUDGE_RETRIES", DEFAULT_JUDGE_RETRIES, minimum=0)


def _env_int(env: Mapping[str, str] | None, name: str, default: int, *, minimum: int) -> int:
    raw = (os.environ if env is None else env).get(name, "").strip()
    try:
        return max(minimum, int(raw)) if raw else default
    except ValueError:
        return default


@dataclass
class JudgeStats:
    """The judge requests one grader made (live ones, not served from the cache), for the cost
    line: each grader counts into its own, so two verifies never share counts."""

    calls: int = 0
    malformed: int = 0  # replies that were not the verdict JSON asked for
    seconds: float = 0.0


def judge_messages(
    input_messages: Sequence[Mapping[str, Any]] | None, old_output: Any, new_output: Any
) -> list[dict[str, Any]]:
    """The exact messages the judge sends (exposed so tests and caches can reason about them)."""
    if input_messages:
        shown = "\n".join(
            f"[{m.get('role', '?')}] {value_as_text(m.get('content'), lines=True)}" for m in input_messages
        )
    else:
        shown = "(not captured)"
    old = value_as_text(old_output, lines=True, limit=MAX_FIELD_CHARS)
    new = value_as_text(new_output, lines=True, limit=MAX_FIELD_CHARS)
    user = (
        f"INPUT:\n{value_as_text(shown, limit=MAX_FIELD_CHARS)}\n\nOLD OUTPUT:\n{old}\n\n"
        f"NEW OUTPUT:\n{new}\n\nAnswer with the JSON object only."
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def skip(reason: str) -> dict[str, Any]:
    return {"verdict": "skip", "confidence": 0.0, "rationale": f"judge skip: {reason}"}


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_verdict(text: str) -> dict[str, Any] | None:
    """The verdict object in a reply (bare JSON, fenced, or embedded in prose), or None."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start = candidate.find("{")
        end = candidate.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            data = json.loads(candidate[start : end + 1])
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        verdict = str(data.get("verdict", "")).strip().lower()
        if verdict not in VERDICTS:
            return None
        try:
            confidence = float(data.get("confidence", 0.5))
        except (TypeError, ValueError):
            confidence = 0.5
        confidence = min(1.0, max(0.0, confidence)) if confidence == confidence else 0.5
        rationale = " ".join(str(data.get("rationale") or "").split())[:500]
        return {"verdict": verdict, "confidence": confidence, "rationale": rationale}
    return None


def llm_judge(
    input_messages: Sequence[Mapping[str, Any]] | None,
    old_output: Any,
    new_output: Any,
    model: str | None = None,
    provider: Provider | None = None,
    cache: ResponseCache | None = None,
    *,
    max_tokens: int | None = None,
    stats: JudgeStats | None = None,
) -> dict[str, Any]:
    """{"verdict": equivalent|better|worse|skip, "confidence": 0..1, "rationale": str}.

    Any failure (no provider for the model, missing key, HTTP error, malformed reply) gives
    verdict "skip" with confidence 0.0 and the reason in the rationale. `max_tokens` None:
    $PROVEAI_JUDGE_MAX_TOKENS, else 200. `stats`, when given, counts the requests made.
    """
    model = judge_model_name(model)
    try:
        chosen = provider if provider is not None else dispatch_cached(model)
        if isinstance(chosen, CachedProvider):
            cached = chosen
        else:
            cached = CachedProvider(chosen, cache if cache is not None else default_cache())
        messages = judge_messages(input_messages, old_output, new_output)
    except ValueError as exc:  # no provider registered for the model
        return skip(f"no provider for judge model {model!r}; set PROVEAI_JUDGE_MODEL or register one ({exc})")
    if max_tokens is None:
        max_tokens = judge_max_tokens()
    counted = stats if stats is not None else JudgeStats()
    attempts = 1 + judge_retries()
    for attempt in range(attempts):
        # a retry after a malformed reply must reach the model, not the cache key it was under
        kwargs: dict[str, Any] = {"temperature": 0, "max_tokens": max_tokens}
        if attempt:
            kwargs["seed"] = attempt
        started = time.perf_counter()
        try:
            response = cached.call(messages, model, **kwargs)
        except ValueError as exc:
            return skip(f"no provider for judge model {model!r}; register one ({exc})")
        except Exception as exc:
            reason = getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}"
            return skip(str(reason))
        finally:
            counted.seconds += time.perf_counter() - started
        if not getattr(response, "cached", False):
            counted.calls += 1
        parsed = parse_verdict(str(getattr(response, "text", response)))
        if parsed is not None:
            return parsed
        counted.malformed += 1
        cached.evict(messages, model, **kwargs)  # never serve an unusable reply again
    return skip(f"malformed judge reply from {model} ({attempts} attempt(s), max_tokens {max_tokens})")


# Known pairs a judge must decide right before a verify relies on it: (name, old, new, verdict)
FITNESS_PAIRS: tuple[tuple[str, str, str, str], ...] = (
    (
        "identical meaning",
        "Your refund of $40 was sent today and should arrive within 5 business days.",
        "We sent your $40 refund today; it should arrive within 5 business days.",
        "equivalent",
    ),
    (
        "clearly worse",
        "Your refund of $40 was sent today and should arrive within 5 business days.",
        "I cannot help you with that. Do not contact us again.",
        "worse",
    ),
    (
        "clearly better",
        "idk, maybe ask someone else",
        "Your refund of $40 was sent today and should arrive within 5 business days.",
        "better",
    ),
)
FITNESS_INPUT = [{"role": "user", "content": "Where is my refund of $40?"}]


def judge_fitness(
    model: str | None = None,
    provider: Provider | None = None,
    *,
    max_tokens: int | None = None,
    stats: JudgeStats | None = None,
) -> tuple[bool, str]:
    """(fit, why) after asking the judge the built-in known pairs (with `max_tokens`, counted
    in `stats`, as llm_judge); never raises.

    `why` names the first pair it got wrong, or the reason it could not answer (unreachable,
    malformed replies), so the warning says what is actually wrong with the judge.
    """
    model = judge_model_name(model)
    for name, old, new, expected in FITNESS_PAIRS:
        got = llm_judge(
            FITNESS_INPUT, old, new, model=model, provider=provider, max_tokens=max_tokens, stats=stats
        )
        if got["verdict"] == "skip":
            reason = str(got["rationale"]).removeprefix("judge skip: ")
            if "malformed" not in reason:  # unreachable, no key, no provider: not the judge's skill
                return False, f"judge {model} unreachable: {reason}"
            return False, f"judge {model} could not answer a known pair ({name}): {reason}"
        if got["verdict"] != expected:
            return False, (
                f"judge {model} answered {got['verdict']!r} on a known {name} pair (expected {expected!r})"
            )
    return True, f"judge {model} decided {len(FITNESS_PAIRS)} known pairs correctly"
