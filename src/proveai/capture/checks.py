"""The checks catalogue: assert_json, regex_match, ..., RuleCheck and LLMJudge (see capture.checking
for the Check protocol, how a check is run, and the composite outcome).

Every check takes `trigger=` (a predicate on the trace; false -> skip without running) and
`name=`. A check that raises is recorded as skip with the error as its reason, never raised.
Composite: any bad -> bad; otherwise at least one good with the rest good/skip -> good;
otherwise (every check skipped, or a "warn" label) -> skip; no checks -> None.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from prove_common.text import value_as_text
from proveai.capture.checking import Check, Trigger, _coerce, composite_outcome, run_check
from proveai.diff.judge import judge_model_name, llm_judge
from proveai.traces.trace import CheckResult, Span, Trace


# ---- per-agent output checks ----------------------------------------------------------------
class _AgentOutputCheck(Check):
    """Checks every span of one agent; bad if any span fails, skip if the agent did not run."""

    default_name = "check"
    agent: str  # always the agent checked

    def __init__(self, agent: str, *, name: str | None = None, trigger: Trigger | None = None) -> None:
        self.agent = agent
        self.name = name or self.default_name
        self.trigger = trigger

    def judge(self, span: Span) -> str | None:
        """None when the span passes, else why it fails."""
        raise TypeError("subclasses implement judge(span)")

    def __call__(self, trace: Trace) -> CheckResult:
        spans = trace.spans_named(self.agent)
        if not spans:
            return self.result("skip", f"agent {self.agent!r} did not run in this trace")
        failures = [f for f in (self.judge(s) for s in spans) if f is not None]
        if failures:
            return self.result("bad", failures[0], score=1 - len(failures) / len(spans))
        return self.result("good")


def _parse_json(output: Any) -> tuple[Any, str | None]:
    if not isinstance(output, str):
        return output, None
    try:
        return json.loads(output), None
    except ValueError as exc:
        return None, f"output is not JSON: {exc}"


class _AssertJson(_AgentOutputCheck):
    default_name = "json_valid"

    def judge(self, span: Span) -> str | None:
        if span.status == "error":
            return f"{self.agent} raised: {span.error}"
        return _parse_json(span.output)[1]


class _RegexMatch(_AgentOutputCheck):
    default_name = "regex_match"

    def __init__(self, agent: str, pattern: str, **kw: Any) -> None:
        super().__init__(agent, **kw)
        self.pattern = re.compile(pattern)

    def judge(self, span: Span) -> str | None:
        if self.pattern.search(value_as_text(span.output)):
            return None
        return f"{self.agent} output does not match /{self.pattern.pattern}/"


class _NotContains(_AgentOutputCheck):
    default_name = "not_contains"

    def __init__(self, agent: str, text: str, **kw: Any) -> None:
        super().__init__(agent, **kw)
        self.text = text

    def judge(self, span: Span) -> str | None:
        found = self.text in value_as_text(span.output)
        return f"{self.agent} output contains {self.text!r}" if found else None


class _OutputLength(_AgentOutputCheck):
    default_name = "output_length"

    def __init__(self, agent: str, min_chars: int = 0, max_chars: int | None = None, **kw: Any) -> None:
        super().__init__(agent, **kw)
        if max_chars is not None and max_chars < min_chars:
            raise ValueError(f"output_length: max_chars {max_chars} is below min_chars {min_chars}")
        self.min_chars, self.max_chars = min_chars, max_chars

    def judge(self, span: Span) -> str | None:
        n = len(value_as_text(span.output))
        if n < self.min_chars:
            return f"{self.agent} output has {n} chars, fewer than {self.min_chars}"
        if self.max_chars is not None and n > self.max_chars:
            return f"{self.agent} output has {n} chars, more than {self.max_chars}"
        return None


class _SchemaMatch(_AgentOutputCheck):
    default_name = "schema_match"

    def __init__(self, agent: str, schema: dict[str, Any], **kw: Any) -> None:
        super().__init__(agent, **kw)
        import jsonschema  # jsonschema: ~100 ms, only when a schema check runs

        jsonschema.validators.validator_for(schema).check_schema(schema)  # a bad schema fails now
        self.schema = schema

    def judge(self, span: Span) -> str | None:
        import jsonschema  # jsonschema: ~100 ms, only when a schema check runs

        value, problem = _parse_json(span.output)
        if problem:
            return problem
        error = jsonschema.exceptions.best_match(
            jsonschema.validators.validator_for(self.schema)(self.schema).iter_errors(value)
        )
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"{self.agent} output at {where}: {error.message}"


class _ContractConformance(_AgentOutputCheck):
    default_name = "contract_conformance"

    def __init__(self, agent: str, model: type, **kw: Any) -> None:
        super().__init__(agent, **kw)
        if not hasattr(model, "model_validate"):
            raise TypeError("contract_conformance needs a pydantic model class")
        self.model = model

    def judge(self, span: Span) -> str | None:
        import pydantic  # pydantic: ~200 ms, only when a contract check runs

        value, problem = _parse_json(span.output)
        if problem:
            return problem
        try:
            self.model.model_validate(value)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
            return f"{self.agent} output breaks {self.model.__name__} at {where}: {first.get('msg')}"
        return None


def assert_json(agent: str, *, name: str | None = None, trigger: Trigger | None = None) -> Check:
    """Good when every output of `agent` is JSON (a dict/list, or a string that parses)."""
    return _AssertJson(agent, name=name, trigger=trigger)


def regex_match(
    agent: str, pattern: str, *, name: str | None = None, trigger: Trigger | None = None
) -> Check:
    """Good when every output of `agent` contains a match of `pattern` (re.search)."""
    return _RegexMatch(agent, pattern, name=name, trigger=trigger)


def not_contains(agent: str, text: str, *, name: str | None = None, trigger: Trigger | None = None) -> Check:
    """Bad when any output of `agent` contains `text` (case-sensitive)."""
    return _NotContains(agent, text, name=name, trigger=trigger)


def output_length(
    agent: str, min_chars: int = 0, max_chars: int | None = None, *,
    name: str | None = None, trigger: Trigger | None = None,
) -> Check:
    """Good when every output of `agent` has between min_chars and max_chars characters."""
    return _OutputLength(agent, min_chars, max_chars, name=name, trigger=trigger)


def schema_match(
    agent: str, schema: dict[str, Any], *, name: str | None = None, trigger: Trigger | None = None
) -> Check:
    """Good when every output of `agent` validates against the JSON Schema."""
    return _SchemaMatch(agent, schema, name=name, trigger=trigger)


def contract_conformance(
    agent: str, model: type, *, name: str | None = None, trigger: Trigger | None = None
) -> Check:
    """Good when every output of `agent` validates as the pydantic `model`."""
    return _ContractConformance(agent, model, name=name, trigger=trigger)


class _ToolCalled(Check):
    agent: str  # the tool looked for

    def __init__(self, tool: str, *, name: str | None = None, trigger: Trigger | None = None) -> None:
        self.agent = tool
        self.name = name or "tool_called"
        self.trigger = trigger

    def __call__(self, trace: Trace) -> CheckResult:
        spans = trace.spans_named(self.agent)
        if not spans:
            return self.result("bad", f"tool {self.agent!r} was not called")
        if all(s.status == "error" for s in spans):
            return self.result("bad", f"tool {self.agent!r} was called but every call raised")
        return self.result("good", f"called {len(spans)} time(s)")


def tool_called(tool: str, *, name: str | None = None, trigger: Trigger | None = None) -> Check:
    """Good when a span named `tool` ran (and not every call of it raised)."""
    return _ToolCalled(tool, name=name, trigger=trigger)


class RuleCheck(Check):
    """A check from a function: fn(trace) -> bool | "good"/"bad"/"skip" | (label, reason) | CheckResult."""

    def __init__(
        self,
        name: str,
        fn: Callable[[Trace], Any],
        *,
        agent: str | None = None,
        trigger: Trigger | None = None,
    ) -> None:
        self.name = name
        self.fn = fn
        self.agent = agent
        self.trigger = trigger

    def __call__(self, trace: Trace) -> CheckResult:
        return _coerce(self, self.fn(trace))


LABEL_OF_VERDICT = {"equivalent": "good", "better": "good", "worse": "bad"}


class LLMJudge(Check):
    """A criterion check graded by an LLM through proveai's judge and provider layer.

    It never raises: llm_judge turns no provider for the model, a provider error or a malformed
    reply into skip with the reason. The judge compares the agent's output with a reference
    answer "an output that meets the criterion" (proveai.diff.judge.llm_judge): equivalent or
    better -> good, worse -> bad, skip -> skip.
    """

    agent: str  # the agent judged

    def __init__(
        self,
        agent: str,
        criterion: str,
        model: str | None = None,
        trigger: Trigger | None = None,
        *,
        name: str | None = None,
    ) -> None:
        self.agent = agent
        self.criterion = criterion
        self.model = model
        self.trigger = trigger
        self.name = name or "llm_judge"

    def resolved_model(self) -> str:
        """`model`, else $PROVEAI_JUDGE_MODEL read now, else the judge's default."""
        return judge_model_name(self.model)

    def __call__(self, trace: Trace) -> CheckResult:
        span = trace.span(self.agent)
        if span is None:
            return self.result("skip", f"agent {self.agent!r} did not run in this trace")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": f"Criterion the output must meet: {self.criterion}"},
            *(span.input_messages or [{"role": "user", "content": str(span.inputs)}]),
        ]
        reference = f"An output that fully meets the criterion: {self.criterion}"
        output = span.output if isinstance(span.output, str) else str(span.output)
        reply = llm_judge(messages, reference, output, model=self.resolved_model())
        label = LABEL_OF_VERDICT.get(reply["verdict"], "skip")
        if label == "skip":  # the rationale already reads "judge skip: <reason>"
            return self.result("skip", reply["rationale"])
        # score keeps the meaning every check gives it (1.0 good, 0.0 bad), whatever the
        # judge's confidence: a "bad" scored 0.9 would read as nearly passing
        return self.result(label, f"judge: {reply['rationale'] or reply['verdict']}")


__all__ = [
    "Check", "CheckResult", "LLMJudge", "RuleCheck", "assert_json", "composite_outcome",
    "contract_conformance", "not_contains", "output_length", "regex_match", "run_check",
    "schema_match", "tool_called",
]
