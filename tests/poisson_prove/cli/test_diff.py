"""`diff` through the installed console script, on runs in a store (and what `diff`, `check` and
`inspect` import)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import poisson_prove
from tests.conftest import assert_clean_error, isolated_env, run_on_terminal
from tests.poisson_prove.runs import Episodes, from_outcomes, pair_outcomes, store_with_pair, write_run

BOX = set("│─┃━┏┓┗┛┌┐└┘├┤┼═║")

def _log(home: Path) -> list[dict]:
    path = home / ".cache" / "poisson-prove" / "compared.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_diff_plain_report_on_a_pipe(prove, workdir: Path, home: Path) -> None:
    _, a, b = store_with_pair(workdir)
    result = prove("diff")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith("safer unresolved: 1 safer, 0 worse · timeout: 0 safer, 0 worse "
                               "(paired test on shared seeds); 2 conditions by 20 steps, q 0.05")
    assert lines[1] == (
        "method paired test on shared seeds (McNemar), the default for runs paired at sweep time"
    )
    assert lines[2:4] == [f"before {a.name}", f"after {b.name}"]
    assert "\x1b" not in result.stdout and not BOX & set(result.stdout)
    header = next(line for line in lines if line.startswith("condition ") and " outcome " in line)
    columns = ["condition", "verdict", "outcome", "before", "after", "b", "c", "p", "q", "result"]
    assert header.split() == columns
    refund = [line for line in lines if line.split("  ")[0] == "ticket refund · temperature 0.0"]
    assert len(refund) == 2 and " safer " in refund[0]  # its table row, then its coverage row
    assert "no change, could have shown +" in result.stdout
    assert "coverage: episodes without an outcome" in result.stdout
    # plain output is stable: the same comparison prints the same bytes
    assert prove("diff", a.name, b.name).stdout == result.stdout
    entries = _log(home)
    assert [e["headline"] for e in entries] == ["safer", "safer"]
    assert entries[0]["before"]["run_id"] == a.run_id and entries[0]["after"]["done"] == 240
    assert entries[0]["method"] == "mcnemar"


def test_diff_json_carries_every_number(prove, workdir: Path) -> None:
    store, a, b = store_with_pair(workdir)
    result = prove("diff", "--json", "--method", "fisher", "--q", "0.1")
    assert result.returncode == 0 and result.stderr == ""
    document = json.loads(result.stdout)
    assert document["schema"] == "poisson-prove.diff/1"
    assert document["method"] == "fisher" and document["q"] == 0.1 and not document["method_is_default"]
    expected = poisson_prove.compare(a.name, b.name, method="fisher", q=0.1, store=store)
    assert document["headline"]["word"] == expected.headline.word
    row = document["conditions"][0]["outcomes"][0]
    want = expected.conditions[0].outcomes[0]
    assert row["p"] == want.p and row["q_value"] == want.q_value
    assert row["before"] == {
        "n": want.before.n, "k": want.before.k, "share": want.before.share, "lo": want.before.lo,
        "hi": want.before.hi, "starred": False, "variance": None, "effective_n": None,
    }
    assert document["coverage"][0]["before_errors"] == [{"kind": "RuntimeError", "count": 2}]


def test_mixed_cases_refused_with_the_docs_lines_and_nothing_logged(prove, workdir: Path, home: Path) -> None:
    mixed = Episodes()
    names = ["password", "refund", "shipping"]
    for temperature in (0.0, 0.7):
        for r in range(30):
            mixed.add({"temperature": temperature}, r, "resolved", case_id=names[r % 3])
    store = workdir / "mixed-runs"
    a = write_run(store, mixed, axes=("temperature",))
    write_run(store, mixed, axes=("temperature",), paired_with=a)
    result = prove("--store", "mixed-runs", "diff")
    assert_clean_error(result, 1)
    assert result.stdout == ""
    assert result.stderr == (
        "error: condition temperature 0.0 ran 3 cases (password, refund, shipping); each case must be its "
        "own sweep axis\n"
        "next: make each case its own sweep axis in the spec, an [axes.<name>] table whose values are the "
        "cases, then sweep again\n"
    )
    assert not (home / ".cache" / "poisson-prove" / "compared.jsonl").exists()


def test_refusals_on_the_command_line(prove, workdir: Path) -> None:
    assert_clean_error(prove("diff"), 1, "the store prove-runs holds 0 runs; a comparison needs two")
    store = workdir / "prove-runs"
    write_run(store, from_outcomes({("refund", 0.0): pair_outcomes()}))
    assert_clean_error(prove("diff"), 1, "holds 1 run", "a comparison needs two")
    write_run(store, from_outcomes({("refund", 0.0): pair_outcomes()}))
    assert_clean_error(prove("diff", "nope", "latest"), 1, 'no run named "nope"')
    unknown = prove("diff", "--event", "timout")
    assert_clean_error(unknown, 1, 'unknown event "timout" (did you mean "timeout"?)')
    assert "next: --event unresolved" in unknown.stderr
    assert_clean_error(prove("diff", "--method", "ttest"), 2, "invalid choice")
    assert_clean_error(prove("diff", "--method", "mcnemar"), 1, "not paired at sweep time")


def _on_a_terminal(workdir: Path, home: Path, columns: str, *args: str) -> str:
    """Run the installed script with its stdout on a pseudo-terminal; what it drew there."""
    env = isolated_env(home, {"TERM": "xterm-256color", "COLUMNS": columns})
    code, drawn, errors = run_on_terminal("poisson-prove", args, workdir, env)
    assert code == 0, errors
    return drawn


@pytest.mark.parametrize("columns", ["120", "80"])
def test_diff_on_a_terminal_draws_colour(workdir: Path, home: Path, columns: str) -> None:
    store_with_pair(workdir)
    output = _on_a_terminal(workdir, home, columns, "diff")
    assert "\x1b[" in output  # colour
    assert "safer" in output and "█" in output, output
    plain = re.sub(r"\x1b\[[0-9;]*m", "", output)
    # every condition stays readable, whatever the width: its label (perhaps wrapped) and verdict
    assert "ticket password ·" in plain and "temperature 0.0" in plain, plain
    assert max(len(line) for line in plain.splitlines()) <= int(columns)


def test_plain_on_a_terminal_prints_what_a_pipe_gets(prove, workdir: Path, home: Path) -> None:
    store_with_pair(workdir)
    piped = prove("diff")
    assert piped.returncode == 0, piped.stderr
    drawn = _on_a_terminal(workdir, home, "120", "--plain", "diff")
    assert "\x1b" not in drawn and not BOX & set(drawn)
    assert drawn == piped.stdout


def _imported(stderr: str) -> set[str]:
    """Module names from a -X importtime log (stderr of a run with PYTHONPROFILEIMPORTTIME)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_diff_and_inspect_never_import_pandas_scipy_stats_or_optimize(prove, workdir: Path) -> None:
    # Errors leave nulls in outcome and t: pyarrow's own conversion of such columns would
    # import pandas. The MDE of a "no change" row is computed too.
    store_with_pair(workdir, after_unresolved=48, error=4)
    for args in (("diff",), ("check", "--json", "--allow-inconclusive"), ("diff", "--method", "logrank_bh")):
        result = prove(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
        assert result.returncode == 0, result.stderr
        imported = _imported(result.stderr)
        # the log is real
        assert "poisson_prove.comparison.stats" in imported and "scipy.special" in imported
        assert not {"pandas", "scipy.stats", "scipy.optimize"} & imported, args
    for args in (("inspect",), ("inspect", "--episode", "ticket=refund/0")):
        result = prove(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
        assert result.returncode == 0, result.stderr
        assert "poisson_prove.inspection.run" in _imported(result.stderr)
        assert not {"pandas", "scipy"} & _imported(result.stderr), args
    helped = prove("diff", "--help", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert helped.returncode == 0
    assert not {"numpy", "pyarrow", "scipy", "rich"} & _imported(helped.stderr)
