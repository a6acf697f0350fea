"""The one progress display: plain lines on a pipe, a Rich bar with rate and ETA on a terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from prove_common.progress import PlainProgress, make_progress
from tests.conftest import isolated_env, run_on_terminal

# what a command does with a long job: the display its output stream calls for
SCRIPT = """
import argparse, sys, time
from prove_common.console import is_pretty
from prove_common.progress import make_progress
mode = sys.argv[1]
pretty = is_pretty(argparse.Namespace(), sys.stdout)
if mode == "tenths":
    report = make_progress(sys.stdout, 40, pretty=pretty)
    names = [""] * 40
else:
    report = make_progress(
        sys.stdout, pretty=pretty, label="replaying [/oops]", every_tenth=False, rate=False, eta=False,
        line=lambda done, total, item: f"replayed {done}/{total} {item}" if done else None,
    )
    names = [f"trace-{i}" for i in range(5)]
total = len(names)
report(0, total, "")
for done, name in enumerate(names, 1):
    time.sleep(0.01)
    report(done, total, name)
report.close()
print("summary")
"""


def test_on_a_pipe_the_sweep_form_prints_a_line_at_each_tenth(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, "tenths"], capture_output=True, text=True, env=isolated_env(tmp_path),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"... {n} of 40 rollouts" for n in range(4, 40, 4)] + ["summary"]
    assert "\x1b" not in done.stdout


def test_on_a_pipe_the_per_item_form_names_each_item(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, "items"], capture_output=True, text=True, env=isolated_env(tmp_path),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"replayed {n}/5 trace-{n - 1}" for n in range(1, 6)] + ["summary"]


def test_on_a_terminal_a_bar_is_drawn_then_cleared(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, {"TERM": "xterm-256color"})
    code, drawn, errors = run_on_terminal("python", ["-c", SCRIPT, "tenths"], tmp_path, env)
    assert code == 0, errors
    assert "rollouts" in drawn and "/40" in drawn and "ETA" in drawn
    assert "\x1b[" in drawn  # a live display, not plain lines
    assert "... 4 of 40 rollouts" not in drawn
    assert drawn.rstrip().endswith("summary")


def test_on_a_terminal_the_label_is_text_not_markup(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, {"TERM": "xterm-256color"})
    code, drawn, errors = run_on_terminal("python", ["-c", SCRIPT, "items"], tmp_path, env)
    assert code == 0, errors
    assert "MarkupError" not in errors
    assert "replaying [/oops]" in drawn
    assert "ETA" not in drawn and "replayed 1/5" not in drawn


def test_plain_progress_prints_nothing_at_the_end_in_tenths_mode() -> None:
    out = io.StringIO()
    report = PlainProgress(out, 10)
    for done in range(1, 11):
        report(done, 10)
    assert out.getvalue().splitlines() == [f"... {n} of 10 rollouts" for n in range(1, 10)]


def test_make_progress_picks_plain_when_not_pretty() -> None:
    out = io.StringIO()
    report = make_progress(out, 2_000, pretty=False)
    report(200, 2_000)
    report.close()
    assert out.getvalue() == "... 200 of 2,000 rollouts\n"
