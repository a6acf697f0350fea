"""`diff` of runs with a case axis (a benchmark, or imports), through the installed console
script: one pooled row per group and failure outcome (the headline family), then the cases that
moved as detail; `--cases all`; both families in `--json`; what differs between imported runs'
sources; the refusals. Runs are written into a real store (RunStore + RunWriter) with a stored
spec declaring the case axis; stdout, stderr and the exit code are checked apart."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from poisson_prove.stats import tests as stats_tests
from tests.conftest import assert_clean_error, isolated_env, run_on_terminal
from tests.poisson_prove.comparison.cases_kit import benchmark_episodes, write_benchmark

CASES = 30


def _rows(rng: np.random.Generator, rate: float, cases: int = CASES, repeats: int = 3) -> list[list[str]]:
    return [["unresolved" if u < rate else "resolved" for u in rng.random(repeats)] for _ in range(cases)]


def _benchmark(workdir: Path, after_rate: float = 0.6, *, paired: bool = True, **options) -> tuple:
    """Runs "a" and "b": two pooled groups (temperature 0.0 and 0.7) of CASES tickets x 3;
    the after run's unresolved rate is `after_rate` at temperature 0.0, unchanged at 0.7."""
    store = workdir / "prove-runs"
    rng = np.random.default_rng(11)
    before = benchmark_episodes(_rows(rng, 0.2), others={"temperature": 0.0})
    after = benchmark_episodes(_rows(rng, after_rate), others={"temperature": 0.0})
    for episodes, rate in ((before, 0.2), (after, 0.2)):
        more = benchmark_episodes(_rows(rng, rate), others={"temperature": 0.7})
        for name in ("cfg", "replicate", "outcome", "t", "horizon", "case_id", "error_kind", "error_message",
                     "meta", "spans"):
            getattr(episodes, name).extend(getattr(more, name))
    a = write_benchmark(store, before, name="a", source=options.pop("source_before", None))
    partner = {"paired_with": a} if paired else {}
    b = write_benchmark(store, after, name="b", source=options.pop("source_after", None), **partner)
    return a, b


def test_diff_prints_a_pooled_row_per_group_and_outcome_then_the_moved_cases(prove, workdir: Path) -> None:
    _benchmark(workdir)
    result = prove("diff", "a", "b")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "worse unresolved: 0 safer, 1 worse · timeout: 0 safer, 0 worse (paired sign-flip test over cases); "
        "2 pooled groups of 60 cases by 20 steps, q 0.05"
    )
    assert lines[1] == (
        "method paired sign-flip test over cases (cases from the ticket axis; McNemar per case), "
        "the default for runs paired at sweep time"
    )
    assert lines[2:4] == ["before a", "after b"]
    assert not any(line.startswith("source differs") for line in lines)  # swept runs carry no source
    title = next(i for i, line in enumerate(lines) if line.startswith("benchmark, pooled over the ticket"))
    assert "q: Benjamini-Hochberg over 4 pooled tests; any failure: the union of the failure outcomes, " \
        "Benjamini-Hochberg over its own 2 tests" in lines[title]
    header = lines[title + 1].split()
    assert header[:5] == ["group", "verdict", "outcome", "before", "after"]
    assert header[5:] == ["b", "c", "cases", "+/-", "p", "q", "result"]
    pooled = lines[title + 2 : title + 8]  # per group: unresolved, timeout, then the union's row
    assert pooled[0].startswith("temperature 0.0  worse ") and " unresolved " in pooled[0]
    assert pooled[0].rstrip().endswith("rose")
    assert " any failure " in pooled[2] and pooled[2].rstrip().endswith("rose")
    assert pooled[3].startswith("temperature 0.7  no change ")
    assert all("could have shown" in line for line in (pooled[1], *pooled[3:]))
    detail = next(i for i, line in enumerate(lines) if line.startswith("per case (detail"))
    assert "q: Benjamini-Hochberg over 120 per-case tests, a family of their own" in lines[detail]
    shown = [line for line in lines[detail + 2 :] if line.startswith("ticket ")]
    assert len(shown) == 10  # the ten cases that moved most, one moved event each at most
    more = next(line for line in lines if line.startswith("… and "))
    assert more.endswith(" more cases that moved (--cases all shows every case)")
    # no two reports differ: the same comparison prints the same bytes
    assert prove("diff", "a", "b").stdout == result.stdout


def test_a_real_sweep_of_the_benchmark_example_and_its_patch_is_compared_by_question(prove, workdir) -> None:
    assert prove("init", "--benchmark").returncode == 0
    assert prove("sweep", "--yes").returncode == 0
    patched = ("--target", "poisson_prove.examples.mock_benchmark:rollout_patched", "--pair-with", "latest")
    assert prove("sweep", "--yes", *patched).returncode == 0
    result = prove("diff")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "safer unresolved: 1 safer, 0 worse (paired sign-flip test over cases); "
        "1 pooled group of 120 cases by 10 steps, q 0.05"
    )
    assert "cases from the question axis" in lines[1]
    assert any("q: Benjamini-Hochberg over 1 pooled test" in line for line in lines)
    (row,) = [line for line in lines if line.startswith("all ")]
    assert row.split()[1:3] == ["safer", "unresolved"] and row.endswith("fell")
    document = json.loads(prove("diff", "--json").stdout)
    pooled = document["conditions"][0]["outcomes"][0]
    assert (pooled["cases"], pooled["pairs"], pooled["verdict"]) == (120, 360, "fell")
    assert pooled["b"] == sum(c["outcomes"][0]["b"] for c in document["cases"])
    gate = prove("check")
    assert gate.returncode == 0 and gate.stdout == result.stdout  # nothing rose, nothing too small


def test_cases_all_prints_every_case_with_every_outcome(prove, workdir: Path) -> None:
    _benchmark(workdir)
    result = prove("diff", "a", "b", "--cases", "all")
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    detail = next(i for i, line in enumerate(lines) if line.startswith("per case (detail, every case)"))
    cases = [line for line in lines[detail:] if line.startswith("ticket ")]
    assert len(cases) == 60 and not any(line.startswith("… and ") for line in lines)
    assert sum(" timeout " in line for line in lines[detail:]) == 60  # every outcome row of each
    bad = prove("diff", "a", "b", "--cases", "some")
    assert bad.returncode == 2 and bad.stdout == "" and "--cases" in bad.stderr


def test_json_carries_both_families_each_row_naming_its_own(prove, workdir: Path) -> None:
    _benchmark(workdir)
    result = prove("diff", "a", "b", "--json")
    assert result.returncode == 0 and result.stderr == ""
    document = json.loads(result.stdout)
    assert (document["case_axis"], document["pooled_test"]) == ("ticket", "sign_flip")
    assert (document["tests"], document["case_tests"]) == (4, 120)
    assert document["method_phrase"] == "paired sign-flip test over cases"
    groups = document["conditions"]
    assert [g["label"] for g in groups] == ["temperature 0.0", "temperature 0.7"]
    assert [g["key"] for g in groups] == ['{"temperature":0.0}', '{"temperature":0.7}']
    assert {g["family"] for g in groups} == {"pooled"}
    rows = [row for g in groups for row in g["outcomes"]]
    assert {row["family"] for row in rows} == {"pooled"}
    first = rows[0]
    assert first["cases"] == CASES and first["cases_up"] + first["cases_down"] <= CASES
    assert first["pairs"] == 3 * CASES and first["b"] + first["c"] > 0
    assert 0 <= first["within_case_correlation"] <= 1 and first["effective_pairs"] <= 3 * CASES
    assert len(document["cases"]) == 60  # every case, whatever the text shows
    assert {c["family"] for c in document["cases"]} == {"case"}
    assert {row["family"] for c in document["cases"] for row in c["outcomes"]} == {"case"}
    assert {c["group"] for c in document["cases"]} == {"temperature 0.0", "temperature 0.7"}
    case = document["cases"][0]
    assert case["case"] == "c0000" and case["label"] == "ticket c0000 · temperature 0.0"
    assert all(row["d"] == row["c"] - row["b"] for c in document["cases"] for row in c["outcomes"])
    # the pooled sums are the cases' sums
    for group in groups:
        members = [c for c in document["cases"] if c["group"] == group["label"]]
        for j, row in enumerate(group["outcomes"]):
            assert row["b"] == sum(c["outcomes"][j]["b"] for c in members)
            assert row["c"] == sum(c["outcomes"][j]["c"] for c in members)
    assert "source_differences" not in document


def test_one_epoch_imports_pooled_row_is_mcnemar_over_the_samples(prove, workdir: Path) -> None:
    """Imported runs with one epoch: every case is one pair, the sign-flip test is McNemar."""
    store = workdir / "prove-runs"
    rng = np.random.default_rng(5)
    before = [["unresolved" if rng.random() < 0.3 else "resolved"] for _ in range(150)]
    after = [["unresolved" if rng.random() < 0.4 else "resolved"] for _ in range(150)]
    ids = [str(i) for i in range(150)]
    runs = []
    for name, rows in (("a", before), ("b", after)):
        episodes = benchmark_episodes(rows, axis="sample", others={"task": "gsm8k"}, case_names=ids)
        runs.append(write_benchmark(store, episodes, axis="sample", name=name,
                                    **({"paired_with": runs[0]} if runs else {})))
    result = prove("diff", "a", "b", "--json")
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)["conditions"][0]["outcomes"][0]
    b = sum(x[0] == "unresolved" != y[0] for x, y in zip(before, after, strict=True))
    c = sum(y[0] == "unresolved" != x[0] for x, y in zip(before, after, strict=True))
    expected = stats_tests.mcnemar(b, c)
    assert (row["b"], row["c"], row["pairs"]) == (b, c, 150)
    assert abs(row["p"] - expected.p_mid) <= 1e-12
    assert abs(row["p_exact"] - expected.p_exact) <= 1e-12
    assert row["effective_pairs"] == 150.0  # one repeat: no within-case correlation to pay for


def test_diff_names_what_differs_between_the_imported_runs_sources(prove, workdir: Path) -> None:
    source = {"tool": "inspect", "model": "openai/gpt-4o", "task_args": {"shots": 5}, "scorer": "match",
              "logs": [{"file": "2026-a.eval"}]}
    changed = {**source, "model": "openai/gpt-4o-mini", "task_args": {"shots": 0}}
    changed["logs"] = [{"file": "2026-b.eval"}]  # the logs always differ: never named
    _benchmark(workdir, source_before=source, source_after=changed)
    result = prove("diff", "a", "b")
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[4] == "source differs: model (openai/gpt-4o -> openai/gpt-4o-mini), task_args"
    document = json.loads(prove("diff", "a", "b", "--json").stdout)
    assert document["source_differences"] == [
        {"key": "model", "before": "openai/gpt-4o", "after": "openai/gpt-4o-mini"},
        {"key": "task_args", "before": {"shots": 5}, "after": {"shots": 0}},
    ]


def test_the_same_sources_print_no_line_and_an_empty_list(prove, workdir: Path) -> None:
    source = {"tool": "lm-eval", "model": "hf/pythia", "logs": [{"file": "x"}]}
    _benchmark(workdir, source_before=source, source_after={**source, "logs": [{"file": "y"}]})
    result = prove("diff", "a", "b")
    assert result.returncode == 0 and "source differs" not in result.stdout
    assert json.loads(prove("diff", "a", "b", "--json").stdout)["source_differences"] == []


def test_independent_runs_with_a_case_axis_use_the_unpaired_sign_flip(prove, workdir: Path) -> None:
    _benchmark(workdir, paired=False)
    result = prove("diff", "a", "b")
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert "(sign-flip test over cases of independent runs)" in lines[0]
    assert lines[1] == (
        "method sign-flip test over cases of independent runs (cases from the ticket axis; Fisher per case), "
        "the default for runs not paired at sweep time"
    )
    header = next(line for line in lines if line.startswith("group "))
    assert header.split()[5:] == ["cases", "+/-", "p", "q", "result"]  # no b and c: no twins


def test_a_terminal_draws_the_pooled_and_the_case_tables(workdir: Path, home: Path) -> None:
    _benchmark(workdir)
    env = isolated_env(home, {"TERM": "xterm-256color", "COLUMNS": "200"})
    code, drawn, stderr = run_on_terminal("poisson-prove", ["diff", "a", "b"], workdir, env)
    assert code == 0 and stderr == ""
    assert "benchmark, pooled over the ticket cases" in drawn and "per case (detail" in drawn
    assert "more cases that moved (--cases all shows every case)" in drawn


def test_runs_declaring_different_case_axes_are_refused(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    episodes = benchmark_episodes([["resolved"] * 3] * 4, others={"temperature": 0.0})
    a = write_benchmark(store, episodes, name="a")
    write_benchmark(store, episodes, name="b", axis="temperature", paired_with=a)
    result = prove("diff", "a", "b")
    assert_clean_error(result, 1, 'declare different case axes ("ticket" and "temperature")')
    assert result.stdout == ""


def test_a_condition_with_two_case_ids_is_refused_with_a_case_axis_too(prove, workdir: Path) -> None:
    store = workdir / "prove-runs"
    episodes = benchmark_episodes([["resolved"] * 3] * 4, others={"temperature": 0.0})
    a = write_benchmark(store, episodes, name="a")
    mixed = benchmark_episodes([["resolved"] * 3] * 4, others={"temperature": 0.0})
    mixed.case_id[0] = "another"
    write_benchmark(store, mixed, name="b", paired_with=a)
    result = prove("diff", "a", "b")
    assert_clean_error(result, 1, "ran 2 cases (another, c0000)")
    assert result.stdout == ""
