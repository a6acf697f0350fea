"""`poisson-prove dashboard` as a command: an empty store and bad flags are one error line, the
page is drawn without matplotlib (its plots are SVG of its own), and on a terminal a bar counts
the runs."""

from __future__ import annotations

from pathlib import Path


def test_an_empty_store_and_bad_flags_are_one_error_line(prove, workdir: Path) -> None:
    from tests.conftest import assert_clean_error

    assert_clean_error(prove("dashboard"), 1, "no store at")
    assert not (workdir / "prove-runs").exists()
    assert_clean_error(prove("dashboard", "--plots", "-1"), 2, "--plots")


def test_without_matplotlib_the_page_and_its_plots_are_drawn(
    prove, paired_store: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "blocker" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    import os

    path = os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")])
    result = prove("dashboard", env={"PYTHONPATH": path})
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    html = (paired_store / "dashboard.html").read_text(encoding="utf-8")
    assert html.count("<svg") >= 3 and "<path" in html  # the forest plot and both runs' panels


def test_on_a_terminal_a_bar_counts_the_runs_then_clears(
    paired_store: Path, workdir: Path, home: Path
) -> None:
    import os
    import pty
    import subprocess

    from tests.conftest import isolated_env, script_path

    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [script_path("poisson-prove"), "dashboard"], cwd=workdir, stdin=subprocess.DEVNULL,
        stdout=follower, stderr=follower, env=isolated_env(home, {"TERM": "xterm"}),
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    assert child.wait(timeout=60) == 0
    text = drawn.decode()
    assert "runs" in text and "2/2" in text and "Traceback" not in text
    assert text.rstrip().endswith(f"wrote {Path('prove-runs') / 'dashboard.html'}")
