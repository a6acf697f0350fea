"""The sweep command's workflow that is not drawing: the user's own command line with one option
changed, and how each way a sweep can end is reported (its error, exit code and next commands)."""

from __future__ import annotations

import dataclasses
import shlex

import pytest

from poisson_prove.errors import ProveExit
from poisson_prove.sweep import SweepResult
from poisson_prove.sweep.command import command_line, command_prefix, sweep_ending, with_option

DONE = SweepResult(
    verdict="done", run_id="r1", name="agent 2026-12-01 b", status="complete", salt="ab" * 8,
    paired_with=None, paired_with_name=None, planned=40, done=40, errored=0, ran=40, seconds=1.0,
)
PREFIX = "poisson-prove --store 'my runs' "


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["sweep", "--dry-run"], ["sweep", "--dry-run", "--replicates", "193"]),
        (["sweep", "--replicates", "20", "--yes"], ["sweep", "--replicates", "193", "--yes"]),
        (["sweep", "--replicates=20"], ["sweep", "--replicates=193"]),
        (["sweep", "--replicates"], ["sweep", "--replicates", "--replicates", "193"]),  # no value: added
    ],
)
def test_with_option_replaces_in_place_else_appends(argv: list[str], expected: list[str]) -> None:
    assert with_option(argv, "--replicates", "193") == expected


def test_command_lines_quote_as_a_shell_reads_them() -> None:
    line = command_line(["sweep", "my spec.toml", "--name", "it's"])
    assert shlex.split(line) == ["poisson-prove", "sweep", "my spec.toml", "--name", "it's"]
    assert shlex.split(command_prefix("my runs") + "diff") == ["poisson-prove", "--store", "my runs", "diff"]
    assert command_prefix(None) == "poisson-prove "


def test_a_done_sweep_has_no_error_and_a_paired_one_points_at_diff() -> None:
    assert sweep_ending(DONE, PREFIX) == sweep_ending(DONE, PREFIX, log_system_exits=lambda: "unused")
    ending = sweep_ending(DONE, PREFIX)
    assert (ending.error, ending.verdict, ending.next_line, ending.next_commands) == (None, None, None, ())
    paired = sweep_ending(dataclasses.replace(DONE, paired_with="r0", paired_with_name="a"), PREFIX)
    assert paired.error is None and paired.next_line == PREFIX + "diff"
    assert paired.next_commands == (PREFIX + "diff",)


def test_each_bad_ending_is_an_error_with_its_exit_code_and_way_on() -> None:
    stopped_early = dataclasses.replace(DONE, verdict="interrupted", status="partial", done=12)
    interrupted = sweep_ending(stopped_early, PREFIX)
    assert interrupted.error is not None and interrupted.error.exit_code == ProveExit.INTERRUPTED
    assert interrupted.error.message == (
        'interrupted: 12 of 40 rollouts kept in run "agent 2026-12-01 b" (partial)'
    )
    assert interrupted.error.suggestions == (PREFIX + "sweep --resume",)
    assert interrupted.verdict is None and interrupted.next_line is None

    exited = dataclasses.replace(DONE, verdict="process_exit", process_exit="the target called os._exit(3)")
    halted = sweep_ending(exited, PREFIX)
    assert halted.verdict == "failed"
    assert halted.error is not None and halted.error.exit_code == ProveExit.STOPPED
    assert halted.error.message.startswith(
        "the target called os._exit(3), which ends the sweep's own process"
    )
    assert halted.error.suggestions == (PREFIX + "sweep --resume --episode-timeout 600",)

    all_errored = dataclasses.replace(DONE, verdict="failed", errored=40, first_error="E: boom")
    failed = sweep_ending(all_errored, PREFIX)
    assert failed.error is not None and failed.error.message == "every rollout errored (E: boom)"
    assert failed.error.suggestions == (PREFIX + "inspect 'agent 2026-12-01 b'",)


def test_system_exits_are_an_error_only_when_logged_and_a_stopped_run_still_says_resume() -> None:
    exited = dataclasses.replace(DONE, verdict="stopped", status="partial", system_exits=3)
    logged: list[str] = []

    def log() -> str:
        logged.append("written")
        return "~/.cache/poisson-prove/errors.log"

    as_json = sweep_ending(exited, PREFIX, log_system_exits=log)
    assert logged == ["written"] and as_json.verdict == "failed"
    assert as_json.error is not None and as_json.error.exit_code == ProveExit.STOPPED
    assert as_json.error.message == (
        "the target called sys.exit in 3 rollouts, stored as errors of kind system_exit "
        "(details in ~/.cache/poisson-prove/errors.log)"
    )
    assert as_json.next_line is None and as_json.next_commands == (PREFIX + "sweep --resume",)
    as_text = sweep_ending(exited, PREFIX)  # the text lines said it already: no error, no log
    assert as_text.error is None and as_text.next_line == PREFIX + "sweep --resume"
    assert logged == ["written"]
