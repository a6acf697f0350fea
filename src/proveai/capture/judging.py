"""LLMJudge: a criterion check graded by an LLM through proveai's judge and provider layer.

It never raises: no judge module, no provider for the model, a provider error or a malformed
reply each give skip with the reason. The judge compares the agent's output with a reference
answer "an output that meets the criterion" (proveai.replay.judge.llm_judge): equivalent or
better -> good, worse -> bad, skip -> skip.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from proveai.capture.checks import Check, CheckResult, Trigger
from proveai.capture.trace import Trace

DEFAULT_JUDGE_MODEL = "claude-haiku-4-5"


class LLMJudge(Check):
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
        return self.model or os.environ.get("PROVEAI_JUDGE_MODEL") or DEFAULT_JUDGE_MODEL

    def __call__(self, trace: Trace) -> CheckResult:
        span = trace.span(self.agent)
        if span is None:
            return self.result("skip", f"agent {self.agent!r} did not run in this trace")
        model = self.resolved_model()
        try:
            judge = importlib.import_module("proveai.replay.judge").llm_judge
        except (ImportError, AttributeError):
            return self.result("skip", "judge skip: the LLM judge is not available in this build")
        try:
            providers = importlib.import_module("proveai.providers")
            providers.dispatch(model)
        except Exception as exc:
            return self.result("skip", f"judge skip: no provider for {model!r} ({exc})")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": f"Criterion the output must meet: {self.criterion}"},
            *(span.input_messages or [{"role": "user", "content": str(span.inputs)}]),
        ]
        reference = f"An output that fully meets the criterion: {self.criterion}"
        output = span.output if isinstance(span.output, str) else str(span.output)
        try:
            reply = judge(messages, reference, output, model=model)
        except Exception as exc:
            return self.result("skip", f"judge skip: {type(exc).__name__}: {exc}")
        verdict = str((reply or {}).get("verdict", "skip")) if isinstance(reply, dict) else "skip"
        rationale = (reply or {}).get("rationale") if isinstance(reply, dict) else None
        confidence = (reply or {}).get("confidence") if isinstance(reply, dict) else None
        label = {"equivalent": "good", "better": "good", "worse": "bad"}.get(verdict, "skip")
        score = float(confidence) if isinstance(confidence, int | float) else None
        return self.result(label, f"judge: {rationale}" if rationale else f"judge verdict {verdict}", score)
