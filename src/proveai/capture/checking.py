"""Running checks on a closed trace: the Check protocol, run_check and the composite outcome.

Checks label a closed trace good / bad / skip. Every check takes `trigger=` (a predicate on the
trace; false -> skip without running) and `name=`. A check that raises is recorded as skip
with the error as its reason, never raised. Composite: any bad -> bad; otherwise at least one
good with the rest good/skip -> good; otherwise (every check skipped, or a "warn" label) ->
skip; no checks -> None. The live Trace runs its checks through here on exit; the catalogue
(capture.checks, with LLMJudge and the judge behind it) is loaded only by pipelines that use it.
"""

from __future__ import annotations

from collections.abc import Callable

from proveai.traces.trace import CheckResult, Trace

Trigger = Callable[[Trace], bool]
CHECK_LABELS = ("good", "bad", "skip", "warn")


class Check:
    """Subclass and implement `__call__(trace) -> CheckResult`; `trigger` gates the cost."""

    name: str = "check"
    agent: str | None = None
    trigger: Trigger | None = None

    def __call__(self, trace: Trace) -> CheckResult:
        raise TypeError(f"{type(self).__name__} must implement __call__(trace) -> CheckResult")

    def result(self, label: str, reason: str | None = None, score: float | None = None) -> CheckResult:
        if score is None:
            score = {"good": 1.0, "bad": 0.0}.get(label)
        return CheckResult(name=self.name, label=label, score=score, reason=reason, agent=self.agent)


CheckLike = Check | Callable[[Trace], object]
"""What a trace's `checks=` holds: a Check, or any callable of the closed trace. Its return is
read as a label (a CheckResult, a bool, "good"/"bad"/"skip"/"warn", or (label, reason)); its
`name`, `agent` and `trigger` attributes are used when it has them."""


def check_name(check: CheckLike) -> str:
    """A check's name: its `name`, else a function's own name, else its type's."""
    return getattr(check, "name", None) or getattr(check, "__name__", None) or type(check).__name__


def _coerce(check: CheckLike, value: object) -> CheckResult:
    name = check_name(check)
    agent = getattr(check, "agent", None)
    if isinstance(value, CheckResult):
        return value
    if isinstance(value, bool):
        return CheckResult(name, "good" if value else "bad", 1.0 if value else 0.0, None, agent)
    if isinstance(value, str) and value in CHECK_LABELS:
        return CheckResult(name, value, {"good": 1.0, "bad": 0.0}.get(value), None, agent)
    if isinstance(value, tuple) and len(value) == 2 and value[0] in CHECK_LABELS:
        return CheckResult(name, value[0], {"good": 1.0, "bad": 0.0}.get(value[0]), str(value[1]), agent)
    return CheckResult(name, "skip", None, f"check returned {type(value).__name__}, not a label", agent)


def run_check(check: CheckLike, trace: Trace) -> CheckResult:
    """Run one check on a closed trace: trigger first, errors recorded as skip."""
    name = check_name(check)
    agent = getattr(check, "agent", None)
    trigger = getattr(check, "trigger", None)
    try:
        if trigger is not None and not trigger(trace):
            return CheckResult(name, "skip", None, "trigger not met", agent)
        result = _coerce(check, check(trace))
    except Exception as exc:
        return CheckResult(name, "skip", None, f"check raised {type(exc).__name__}: {exc}", agent)
    if result.label not in CHECK_LABELS:
        return CheckResult(result.name, "skip", result.score, f"unknown label {result.label!r}", result.agent)
    return result


def composite_outcome(results: list[CheckResult]) -> str | None:
    if not results:
        return None
    labels = {r.label for r in results}
    if "bad" in labels:
        return "bad"
    if "good" in labels and labels <= {"good", "skip"}:
        return "good"
    return "skip"
