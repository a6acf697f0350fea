"""Tier 3: llm_judge — one structured-JSON prompt, code-fence tolerant, never raises.

The model is `model`, else $PROVEAI_JUDGE_MODEL read at call time, else claude-haiku-4-5.
Calls go through a CachedProvider, so a repeated judgement costs nothing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

DEFAULT_JUDGE_MODEL = "claude-haiku-4-5"
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


def _clip(text: str) -> str:
    return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS] + "\n[... truncated]"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2, default=str)


def judge_messages(
    input_messages: Sequence[dict[str, Any]] | None, old_output: Any, new_output: Any
) -> list[dict[str, Any]]:
    """The exact messages the judge sends (exposed so tests and caches can reason about them)."""
    if input_messages:
        shown = "\n".join(f"[{m.get('role', '?')}] {_as_text(m.get('content'))}" for m in input_messages)
    else:
        shown = "(not captured)"
    user = (
        f"INPUT:\n{_clip(shown)}\n\nOLD OUTPUT:\n{_clip(_as_text(old_output))}\n\n"
        f"NEW OUTPUT:\n{_clip(_as_text(new_output))}\n\nAnswer with the JSON object only."
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
    input_messages: Sequence[dict[str, Any]] | None,
    old_output: Any,
    new_output: Any,
    model: str | None = None,
    provider: Any = None,
    cache: Any = None,
) -> dict[str, Any]:
    """{"verdict": equivalent|better|worse|skip, "confidence": 0..1, "rationale": str}.

    Any failure (no provider for the model, missing key, HTTP error, malformed reply) gives
    verdict "skip" with confidence 0.0 and the reason in the rationale.
    """
    from proveai.cache import CachedProvider, default_cache

    model = judge_model_name(model)
    try:
        if provider is None:
            from proveai.providers.registry import dispatch

            provider = dispatch(model)
        if not isinstance(provider, CachedProvider):
            provider = CachedProvider(provider, cache if cache is not None else default_cache())
        messages = judge_messages(input_messages, old_output, new_output)
        response = provider.call(messages, model, temperature=0)
    except ValueError as exc:  # no provider registered for the model
        return skip(f"no provider for judge model {model!r}; set PROVEAI_JUDGE_MODEL or register one ({exc})")
    except Exception as exc:
        reason = getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}"
        return skip(str(reason))
    text = getattr(response, "text", response)
    parsed = parse_verdict(str(text))
    if parsed is None:
        provider.evict(messages, model, temperature=0)  # never serve an unusable reply again
        return skip(f"malformed judge reply from {model}")
    return parsed
