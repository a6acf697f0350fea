"""`snap`: one pinned agent, and the assertion that new output did not regress against it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proveai.diff.verdict import Grade, Status
from proveai.snapshot.grading import grade_iteration
from proveai.snapshot.model import (
    AgentDefinition,
    ExpectedIO,
    load_snapshot,
    snapshot_path,
    unknown_agent_error,
)
from proveai.snapshot.tiers import TierGrader
from proveai.store.judge_cache import JudgeCache


@dataclass
class SnapAgent:
    """The pinned definition and calls of one agent of a snapshot."""

    snapshot_name: str
    definition: AgentDefinition
    calls: tuple[ExpectedIO, ...]
    snapshots_dir: Path

    @classmethod
    def load(cls, snapshots_dir: Path, name: str, agent: str) -> SnapAgent:
        snapshot = load_snapshot(snapshot_path(snapshots_dir, name))
        if agent not in snapshot.agents:
            raise unknown_agent_error(agent, snapshot.agents, f"snapshot {name!r}")
        return cls(name, snapshot.agents[agent], snapshot.expected(agent), snapshots_dir)

    @property
    def agent(self) -> str:
        return self.definition.name

    @property
    def output(self) -> Any:
        """The pinned output (of the first call, for an agent called in a loop)."""
        return self.calls[0].output if self.calls else None

    @property
    def inputs(self) -> Any:
        return self.calls[0].inputs if self.calls else None

    @property
    def prompt(self) -> str | None:
        return self.definition.prompt

    def grade(self, output: Any, *, iteration: int = 0, judge_model: str | None = None) -> Grade:
        pinned = self.calls[iteration]
        fresh = ExpectedIO(inputs=pinned.inputs, output=output, input_messages=pinned.input_messages)
        grader = TierGrader.from_env(judge_model, JudgeCache(self.snapshots_dir))
        grade = grade_iteration(pinned, fresh, self.definition, grader)
        if grader.cache is not None:
            grader.cache.save()
        return grade

    def assert_no_regression(
        self, output: Any, *, iteration: int = 0, judge_model: str | None = None
    ) -> Grade:
        """Fail the test when `output` regressed against the pin, or could not be judged."""
        import pytest  # the pytest extra: only under a test run

        grade = self.grade(output, iteration=iteration, judge_model=judge_model)
        where = f"agent {self.agent!r} (snapshot {self.snapshot_name!r})"
        if grade.status == Status.REGRESSED:
            pytest.fail(f"{where} regressed — {grade.rationale}", pytrace=False)
        if grade.status == Status.INCONCLUSIVE:
            pytest.fail(
                f"{where} changed and could not be judged — {grade.rationale}; set PROVEAI_JUDGE_MODEL "
                "and its provider (PROVEAI_PROVIDER_PATTERN / PROVEAI_PROVIDER_BASE_URL)",
                pytrace=False,
            )
        return grade
