"""render/verify.py: the gate's verdict in words comes from the verdicts (through the GateVerdict
verify decides from them), never from an exit code; the summary line and the step summary
read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from proveai.diff.verdict import AgentVerdict, Grade, Status, Tier
from proveai.errors import ProveAIExit
from proveai.render.verify import step_summary_markdown, summary_line, verdict_cells, verdict_word
from proveai.snapshot.model import AgentDefinition, Capture, Snapshot
from proveai.snapshot.verify import GateVerdict, JudgeMetrics, VerifyMetrics, VerifyResult, gate_verdict
from proveai.snapshot.verify import VerifyOptions as Options

SNAPSHOT = Snapshot("triage", 3, {"draft": AgentDefinition("draft")}, (Capture("t" * 32, {}),))


def result(*verdicts: AgentVerdict, options: Options = Options()) -> VerifyResult:
    fails = any(v.fails_gate for v in verdicts)
    gate = gate_verdict(verdicts, options, fails)
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.status.value] = counts.get(verdict.status.value, 0) + 1
    metrics = VerifyMetrics(
        mode="rerun", agents=len(verdicts), counts=counts, judge_model=None if options.no_judge else "j",
        tier_grades=0, judge_cache_hits=0, replicates=1, exit_code=gate.exit_code, judge_unfit=None,
        judge_unreachable=False, judge=JudgeMetrics(0, 0, 0.0, 200),
    )
    return VerifyResult(SNAPSHOT, "rerun", verdicts, (), "verify-1", Path("runs/verify-1"), gate, (), metrics)


def row(agent: str, status: Status, rationale: str = "why") -> AgentVerdict:
    return AgentVerdict(agent, Grade(status, Tier.JUDGE, rationale), "downstream")


UNJUDGED = row("qa", Status.INCONCLUSIVE, "judge unavailable: no key")


@pytest.mark.parametrize(
    ("verdicts", "options", "gate", "word", "exit_code"),
    [
        ((row("draft", Status.UNCHANGED),), Options(), GateVerdict.PASS, "pass", ProveAIExit.OK),
        ((row("draft", Status.DRIFTED),), Options(), GateVerdict.PASS, "pass", ProveAIExit.OK),
        ((row("draft", Status.MISSING), UNJUDGED), Options(), GateVerdict.FAIL, "FAIL (regression)",
         ProveAIExit.REGRESSION),
        ((UNJUDGED,), Options(no_judge=True), GateVerdict.NOT_GRADED, "not graded (hash-only mismatch)",
         ProveAIExit.USAGE),
        ((UNJUDGED,), Options(strict_judge=True), GateVerdict.INCONCLUSIVE, "INCONCLUSIVE",
         ProveAIExit.INCONCLUSIVE),
        ((UNJUDGED,), Options(), GateVerdict.PASS,
         "pass, but 1 change(s) NOT checked (--strict-judge exits 3)", ProveAIExit.OK),
    ],
)
def test_the_word_and_the_exit_code_follow_from_the_verdicts(
    verdicts: tuple[AgentVerdict, ...], options: Options, gate: GateVerdict, word: str, exit_code: int
) -> None:
    verified = result(*verdicts, options=options)
    assert verified.gate == gate and verified.exit_code == exit_code
    assert verdict_word(verified) == word
    assert summary_line(verified).endswith(f" · rerun · run verify-1 · {word}")
    assert f"### Snapshot `triage` v3 — {word}" in step_summary_markdown([verified], None)


def test_verdict_cells_read_each_status_with_its_symbol() -> None:
    verified = result(row("draft", Status.REGRESSED, "judge: lost a fact"), UNJUDGED)
    assert verdict_cells(verified) == [
        ("draft", "✗ regressed", "downstream", "judge: lost a fact"),
        ("qa", "? inconclusive", "downstream", "judge unavailable: no key"),
    ]
