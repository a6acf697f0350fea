"""LLMJudge: a criterion check graded by an LLM through proveai's judge and provider layer.

It never raises: llm_judge turns no provider for the model, a provider error or a malformed
reply into skip with the reason. The judge compares the agent's output with a reference
answer "an output that meets the criterion" (proveai.replay.judge.llm_judge): equivalent or
better -> good, worse -> bad, skip -> skip.
"""

from __future__ import annotations

from typing import Any

from proveai.capture.checks import Check, CheckResult, Trigger
from proveai.capture.trace import Trace

LABEL_OF_VERDICT = {"equivalent": "good", "better": "good", "worse": "bad"}


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
        """`model`, else $PROVEAI_JUDGE_MODEL read now, else the judge's default."""
        from proveai.replay.judge import judge_model_name

        return judge_model_name(self.model)

    def __call__(self, trace: Trace) -> CheckResult:
        from proveai.replay.judge import llm_judge

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
