"""snapshot/gate.py: verify options checked for meaning (typed errors naming the option),
the snapshots a verify plans, and one exit code folded from many snapshots by precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from proveai.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, EXIT_USAGE, ProveAIError
from proveai.snapshot.gate import (
    EXIT_PRECEDENCE,
    VerifyBatch,
    VerifyOptionError,
    plan_verify,
    verify_options,
)


@pytest.mark.parametrize(
    ("kwargs", "option", "message"),
    [
        ({"replicates": 0}, "--replicates", "--replicates must be >= 1, --timeout > 0 and --alpha in (0, 1)"),
        ({"timeout_s": 0}, "--timeout", "--replicates must be >= 1, --timeout > 0 and --alpha in (0, 1)"),
        ({"alpha": 1.0}, "--alpha", "--replicates must be >= 1, --timeout > 0 and --alpha in (0, 1)"),
        ({"judge_max_tokens": 0}, "--judge-max-tokens", "--judge-max-tokens must be >= 1"),
        ({"overrides": ["draft=p.txt"], "quick": True}, "--override", "--override replays pinned requests"),
        ({"overrides": ["draft=p.txt"], "replicates": 3}, "--override", "cannot be combined"),
    ],
)
def test_options_that_mean_nothing_are_typed_errors(kwargs: dict, option: str, message: str) -> None:
    with pytest.raises(VerifyOptionError) as caught:
        verify_options(env={}, **kwargs)
    assert caught.value.option == option
    assert message in caught.value.message
    assert caught.value.exit_code == EXIT_USAGE


def test_environment_switches_count_as_the_flags() -> None:
    options = verify_options(env={"PROVEAI_NO_JUDGE": "1", "PROVEAI_STRICT_JUDGE": "no"})
    assert options.no_judge and not options.strict_judge
    assert verify_options(env={}, replicates=None).replicates == 0  # as many as pinned


def _failed(*codes: int) -> VerifyBatch:
    failures = tuple(ProveAIError(f"snapshot 's{i}': x", exit_code=c) for i, c in enumerate(codes))
    return VerifyBatch(results=(), failures=failures, reason=None)


def test_exit_code_follows_the_documented_precedence() -> None:
    assert EXIT_PRECEDENCE == (EXIT_REGRESSION, EXIT_USAGE, EXIT_INCONCLUSIVE)
    assert _failed().exit_code == EXIT_OK
    assert _failed(EXIT_INCONCLUSIVE).exit_code == EXIT_INCONCLUSIVE
    assert _failed(EXIT_INCONCLUSIVE, EXIT_USAGE).exit_code == EXIT_USAGE
    assert _failed(EXIT_USAGE, EXIT_REGRESSION, EXIT_INCONCLUSIVE).exit_code == EXIT_REGRESSION


def test_plan_refuses_an_empty_or_malformed_store(tmp_path: Path) -> None:
    with pytest.raises(ProveAIError, match="no snapshots in") as empty:
        plan_verify(tmp_path)
    assert list(empty.value.suggestions) == ["proveai snapshot init"]
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ProveAIError) as broken:
        plan_verify(tmp_path)
    assert list(broken.value.suggestions) == ["proveai snapshot list"]
