"""Bad inputs to `poisson-prove`, one row per case of the red-team reports (reliability.md's
groups P, R, C, S and reliability-2.md section 4), each with its expected exit code: exactly one
`error:` line when non-zero, no traceback, and nothing written for a refusal.

Every case runs in one driver process (bad_inputs_driver.py) that imports the console script's
entry point once and forks a child per case, exactly as the installed script calls it; a few
cases also run through the installed script itself, to hold the driver faithful.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import isolated_env, script_path
from tests.e2e.bad_inputs_kit import Case, both, check, edit, fifo, run_table, symlink, tree, write

BASE = """\
target = "agent:rollout"
target_id = "agent"
t_unit = "steps"
replicates = 20

[axes.x]
type = "categorical"
values = ["a", "b"]

[declare]
outcomes = ["done", "fail"]
failures = ["fail"]
successes = ["done"]
"""

AGENT = """\
import random
from poisson_prove import Episode

def rollout(cfg, seed):
    rng = random.Random(seed)
    return Episode("fail" if rng.random() < 0.3 else "done", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""

BAD_AGENTS = """\
import math, os, signal, sys, threading
from poisson_prove import Episode

def _ok(cfg):
    return {"case_id": cfg["x"]}

def osexit(cfg, seed):
    os._exit(0)

def posix_exit(cfg, seed):
    import posix
    posix._exit(0)

def ctypes_exit(cfg, seed):
    import ctypes
    ctypes.CDLL(None)._exit(0)

def thread_exit(cfg, seed):
    t = threading.Thread(target=os._exit, args=(0,)); t.start(); t.join()

def sigkill(cfg, seed):
    os.kill(os.getpid(), signal.SIGKILL)

def sigterm(cfg, seed):
    os.kill(os.getpid(), signal.SIGTERM)

class Boom(BaseException):
    pass

def base_exception(cfg, seed):
    raise Boom("boom")

class BadStr(Exception):
    def __str__(self):
        raise ValueError("str of exception fails")

def bad_str(cfg, seed):
    raise BadStr()

def surrogate(cfg, seed):
    return Episode("done", 1, 5, {"s": "\\ud800", "case_id": "\\ud800"})

def chdir(cfg, seed):
    os.chdir("/")
    return Episode("done", 1, 5, _ok(cfg))

def meta_object(cfg, seed):
    return Episode("done", 1, 5, {"x": object()})

def meta_nan(cfg, seed):
    return Episode("done", 1, 5, {"x": math.nan})

def returns_none(cfg, seed):
    return None

def returns_str(cfg, seed):
    return "done"

def t_past_horizon(cfg, seed):
    return Episode("done", 9, 5, _ok(cfg))

def t_negative(cfg, seed):
    return Episode("done", -1, 5, _ok(cfg))

def t_nan(cfg, seed):
    return Episode("done", math.nan, 5, _ok(cfg))

def undeclared(cfg, seed):
    return Episode("weird", 1, 5, _ok(cfg))

def raises(cfg, seed):
    raise RuntimeError("nope")

def sys_exit(cfg, seed):
    sys.exit("bye")

def keyboard(cfg, seed):
    raise KeyboardInterrupt

def prints(cfg, seed):
    print("x" * 100_000)
    return Episode("done", 1, 5, _ok(cfg))

def no_args():
    pass

not_callable = 42
"""

IMPORT_EXIT = "import os\nos._exit(0)\n"
IMPORT_RAISES = "raise RuntimeError('at import')\n"
IMPORT_SYSEXIT = "import sys\nsys.exit(3)\n"

S = ("sweep", "base.toml", "--yes", "--max-mde", "1")
P = ("--store", "ST")
SWEEP = (*P, *S)
SWEPT = "fixed by the supervised sweep"


def spec(old: str, new: str) -> Any:
    return edit("base.toml", old, new)


def target(name: str) -> tuple[str, ...]:
    return (*SWEEP, "--target", f"bad_agents:{name}")


def manifest(run: str, change: Any) -> Any:
    """Rewrite run `run`'s manifest.json with change(document)."""

    def setup(folder: Path) -> None:
        for path in (folder / "ST").glob("*/manifest.json"):
            document = json.loads(path.read_text())
            if document.get("name") == run:
                path.write_text(json.dumps(change(document)))
                return
        raise AssertionError(run)

    return setup


def manifest_text(run: str, text: str) -> Any:
    def setup(folder: Path) -> None:
        for path in (folder / "ST").glob("*/manifest.json"):
            if json.loads(path.read_text()).get("name") == run:
                path.write_text(text)
                return
        raise AssertionError(run)

    return setup


def batches(run: str, change: Any) -> Any:
    """Rewrite every batch of run `run` with change(pyarrow table)."""

    def setup(folder: Path) -> None:
        import pyarrow.parquet as pq  # only the store-damage cases rewrite Parquet

        for path in (folder / "ST").glob("*/manifest.json"):
            if json.loads(path.read_text()).get("name") == run:
                for batch in sorted((path.parent / "episodes").glob("*.parquet")):
                    if change is None:
                        batch.write_bytes(batch.read_bytes()[:100])
                    else:
                        pq.write_table(change(pq.read_table(batch)), batch)
                return
        raise AssertionError(run)

    return setup


def seeds_as_text(table: Any) -> Any:
    import pyarrow as pa  # only the store-damage cases rewrite Parquet

    seeds = pa.array([str(s) for s in table.column("seed").to_pylist()])
    return table.set_column(table.schema.get_field_index("seed"), "seed", seeds)


def run_folder(run: str, action: str) -> Any:
    def setup(folder: Path) -> None:
        import shutil  # only these cases move store folders

        for path in (folder / "ST").glob("*/manifest.json"):
            if json.loads(path.read_text()).get("name") == run:
                if action == "no-episodes":
                    shutil.rmtree(path.parent / "episodes")
                elif action == "copy-batch":
                    first = sorted((path.parent / "episodes").glob("*.parquet"))[0]
                    shutil.copy(first, first.with_name("batch-999999-dddddd.parquet"))
                elif action == "events-garbage":
                    (path.parent / "events.jsonl").write_text("{garbage\n")
                elif action == "foreign-parquet":
                    import pyarrow as pa  # only this case writes a foreign Parquet file
                    import pyarrow.parquet as pq  # only this case writes a foreign Parquet file

                    pq.write_table(
                        pa.table({"b": [1]}), path.parent / "episodes" / "batch-999998-eeeeee.parquet"
                    )
                return
        raise AssertionError(run)

    return setup


def _id_of(folder: Path, run: str) -> str:
    for path in (folder / "ST").glob("*/manifest.json"):
        document = json.loads(path.read_text())
        if document.get("name") == run:
            return str(document["run_id"])
    raise AssertionError(run)


CASES: list[Case] = [
    # ---- reliability.md section 3: spec files and targets (P01-P32) ---------------------------
    Case("P01-missing-spec", (*P, "sweep", "nope.toml", "--yes"), 1),
    Case("P02-malformed-toml", SWEEP, 1, spec("[declare]", "[declare")),
    Case("P03-replicates-string", SWEEP, 1, spec("replicates = 20", 'replicates = "lots"')),
    Case("P04-replicates-float", SWEEP, 1, spec("replicates = 20", "replicates = 1.5")),
    Case("P05-replicates-zero", SWEEP, 1, spec("replicates = 20", "replicates = 0")),
    Case("P06-replicates-negative", SWEEP, 1, spec("replicates = 20", "replicates = -5")),
    Case("P07-unknown-top-key", SWEEP, 1, spec("replicates = 20", "replicates = 20\nreplicate = 3")),
    Case("P08-unknown-axis-key", SWEEP, 1, spec('type = "categorical"', 'type = "categorical"\nvalue = 1')),
    Case("P09-empty-axis", SWEEP, 1, spec('values = ["a", "b"]', "values = []")),
    Case("P10-repeated-axis-value", SWEEP, 1, spec('values = ["a", "b"]', 'values = ["a", "a"]')),
    Case("P11-bad-axis-type", SWEEP, 1, spec('type = "categorical"', 'type = "categoric"')),
    Case("P12-string-on-continuous", SWEEP, 1, spec('type = "categorical"', 'type = "continuous"')),
    Case(
        "P13-float-on-integer",
        SWEEP,
        1,
        spec('type = "categorical"\nvalues = ["a", "b"]', 'type = "integer"\nvalues = [1, 1.5]'),
    ),
    Case("P14-undeclared-failure", SWEEP, 1, spec('failures = ["fail"]', 'failures = ["worse"]')),
    Case("P15-failure-and-success", SWEEP, 1, spec('successes = ["done"]', 'successes = ["done", "fail"]')),
    Case("P16-target-missing", SWEEP, 1, spec('target = "agent:rollout"\n', "")),
    Case("P17-module-absent", SWEEP, 1, spec("agent:rollout", "nomodule:rollout")),
    Case("P18-function-absent", SWEEP, 1, spec("agent:rollout", "agent:nothing")),
    Case(
        "P19-sysexit-at-import",
        SWEEP,
        1,
        both(spec("agent:rollout", "imp:rollout"), write("imp.py", IMPORT_SYSEXIT)),
    ),
    Case(
        "P20-osexit-at-import",
        SWEEP,
        1,
        both(spec("agent:rollout", "imp:rollout"), write("imp.py", IMPORT_EXIT)),
    ),
    Case(
        "P20-json",
        (*SWEEP, "--json"),
        1,
        both(spec("agent:rollout", "imp:rollout"), write("imp.py", IMPORT_EXIT)),
    ),
    Case(
        "P21-raises-at-import",
        SWEEP,
        1,
        both(spec("agent:rollout", "imp:rollout"), write("imp.py", IMPORT_RAISES)),
    ),
    Case("P22-wrong-signature", SWEEP, 1, spec("agent:rollout", "bad_agents:no_args")),
    Case("P23-not-callable", SWEEP, 1, spec("agent:rollout", "bad_agents:not_callable")),
    Case("P24-target-42", SWEEP, 1, spec('"agent:rollout"', "42")),
    Case(
        "P25-huge-replicates",
        (*SWEEP, "--max-rollouts", "10"),
        1,
        spec("replicates = 20", "replicates = 100000000000"),
    ),
    Case("P26-no-colon", SWEEP, 1, spec("agent:rollout", "agent.rollout")),
    Case("P27-binary-spec", SWEEP, 1, write("base.toml", b"\x00\xff\xfe\x89PNG")),
    Case(
        "P28-chaos-rate-2",
        SWEEP,
        1,
        spec("[declare]", '[[chaos.faults]]\nkind = "timeout"\nrate = 2\n\n[declare]'),
    ),
    Case(
        "P29-capture-no-limit",
        SWEEP,
        1,
        spec("[declare]", "[capture]\nmax_observation_bytes = -1\n\n[declare]"),
    ),
    Case("P30-empty-spec", SWEEP, 1, write("base.toml", "")),
    Case("P31-spec-is-folder", (*P, "sweep", "ST", "--yes"), 1),
    Case(
        "P32-no-declare",
        SWEEP,
        1,
        spec('[declare]\noutcomes = ["done", "fail"]\nfailures = ["fail"]\nsuccesses = ["done"]\n', ""),
    ),
    # ---- reliability.md: rollout behaviour (R01-R26) ---------------------------------------
    Case("R01-raises", target("raises"), 3, writes=True),
    Case("R02-osexit", target("osexit"), 3, writes=True),
    Case("R02-json", (*target("osexit"), "--json"), 3, writes=True),
    Case("R03-returns-none", target("returns_none"), 3, writes=True),
    Case("R04-returns-str", target("returns_str"), 3, writes=True),
    Case("R05-t-past-horizon", target("t_past_horizon"), 3, writes=True),
    Case("R06-t-negative", target("t_negative"), 3, writes=True),
    Case("R07-t-nan", target("t_nan"), 3, writes=True),
    Case("R08-undeclared-outcome", target("undeclared"), 3, writes=True),
    Case("R09-prints-json", (*target("prints"), "--json"), 0, writes=True),
    Case("R12-sys-exit", target("sys_exit"), 3, writes=True),
    Case("R13-keyboard-interrupt", target("keyboard"), 130, writes=True),
    Case("R22-meta-object", target("meta_object"), 3, writes=True),
    Case("R23-meta-nan", target("meta_nan"), 3, writes=True),
    # ---- reliability.md: CLI flags and commands (C01-C34) ----------------------------------
    Case("C01-unknown-flag", (*SWEEP, "--frobnicate"), 2),
    Case("C02-batch-size-0", (*SWEEP, "--batch-size", "0"), 2),
    Case("C03-replicates-abc", (*SWEEP, "--replicates", "abc"), 2),
    Case("C04-salt-zz", (*SWEEP, "--salt", "zz"), 2),
    Case("C05-timeout-negative", (*SWEEP, "--episode-timeout", "-1"), 2),
    Case("C06-timeout-nan", (*SWEEP, "--episode-timeout", "nan"), 2),
    Case("C07-max-mde-2", (*P, "sweep", "base.toml", "--yes", "--max-mde", "2"), 2),
    Case("C08-max-rollouts-0", (*SWEEP, "--max-rollouts", "0"), 2),
    Case("C09-bad-backend", (*SWEEP, "--backend", "nowhere"), 2),
    Case("C10-bad-target", (*SWEEP, "--target", "no colon"), 2),
    Case("C11-empty-name", (*SWEEP, "--name", ""), 2),
    Case("C12-diff-q-2", (*P, "diff", "a", "b", "--q", "2"), 2),
    Case("C13-no-verb", P, 2, errors=0),  # the help on stdout, as argparse prints it
    Case("C14-store-no-value", ("--store",), 2),
    Case("C15-pair-with-unknown", (*SWEEP, "--pair-with", "nope"), 1),
    Case("C16-resume-unknown", (*P, "sweep", "--resume", "nope", "--yes"), 1),
    Case("C17-store-is-file", ("--store", "base.toml", *S), 1),
    Case("C18-diff-unknown", (*P, "diff", "a", "nope"), 1),
    Case("C19-check-unknown", (*P, "check", "nope", "b"), 1),
    Case("C20-timeout-inf", (*SWEEP, "--episode-timeout", "inf"), 2),
    Case("C21-inspect-unknown", (*P, "inspect", "nope"), 1),
    Case("C22-resume-complete", (*P, "sweep", "--resume", "a", "--yes"), 1),
    Case("C23-no-yes-no-terminal", (*P, "sweep", "base.toml", "--max-mde", "1"), 1),
    Case("C24-diff-itself", (*P, "diff", "a", "a"), 1),
    Case("C25-empty-store", ("--store", "empty", "runs"), 0, writes=True),
    Case("C26-diff-empty-store", ("--store", "empty", "diff", "a", "b"), 1, writes=True),
    Case("C27-init-over-existing", ("init", "--example"), 1, write("prove.toml", "x = 1\n")),
    Case("C28-salt-with-pair", (*SWEEP, "--pair-with", "a", "--salt", "00" * 16), 2),
    Case(
        "C29-resume-with-target",
        (*P, "sweep", "--resume", "p", "--yes", "--target", "agent:rollout"),
        0,
        writes=True,
    ),
    Case("C30-bad-method", (*P, "diff", "a", "b", "--method", "nope"), 2),
    # ---- reliability.md: damaged run store (S01-S18) ---------------------------------------
    Case("S01-runs-garbage-manifest", (*P, "runs"), 0, manifest_text("p", "{garbage")),
    Case("S02-diff-garbage-manifest", (*P, "diff", "a", "b"), 1, manifest_text("a", "{garbage")),
    Case("S04-runs-manifest-id-only", (*P, "runs"), 0, manifest("p", lambda d: {"run_id": d["run_id"]})),
    Case(
        "S05-diff-manifest-id-only",
        (*P, "diff", "a", "b"),
        1,
        manifest("a", lambda d: {"run_id": d["run_id"]}),
    ),
    Case("S06-runs-manifest-list", (*P, "runs"), 0, manifest_text("p", "[]")),
    Case("S07-truncated-batch-diff", (*P, "diff", "a", "b"), 1, batches("a", None)),
    Case("S08-truncated-batch-inspect", (*P, "inspect", "a"), 1, batches("a", None)),
    Case("S09-no-episodes-folder", (*P, "diff", "a", "b"), 1, run_folder("a", "no-episodes")),
    Case("S10-garbage-events", (*P, "diff", "a", "b"), 0, run_folder("a", "events-garbage")),
    Case("S12-foreign-parquet", (*P, "diff", "a", "b"), 1, run_folder("a", "foreign-parquet")),
    Case("S16-copied-batch", (*P, "diff", "a", "b", "--json"), 1, run_folder("a", "copy-batch")),
    Case(
        "S18-replicates-lots",
        (*P, "sweep", "--resume", "p", "--yes"),
        1,
        manifest("p", lambda d: {**d, "replicates": "lots"}),
    ),
    # ---- reliability-2.md section 4: the 27 unclean cases ----------------------------------
    Case("RO43-posix-exit", (*target("posix_exit"), "--json"), 3, writes=True),
    Case("RO44-ctypes-exit", (*target("ctypes_exit"), "--json"), 3, writes=True),
    Case("RO45-thread-exit", (*target("thread_exit"), "--json"), 3, writes=True),
    Case("RO30-sigkill-self", target("sigkill"), 3, writes=True),
    Case("RO31-sigterm-self", target("sigterm"), 3, writes=True),
    Case("RO17-base-exception", target("base_exception"), 3, writes=True),
    Case("RO16-surrogate-meta", target("surrogate"), 3, writes=True),
    Case("RO22-str-raises", target("bad_str"), 3, writes=True),
    Case("RO33-chdir", target("chdir"), 0, writes=True),
    Case("RO27-fork-bomb", target("fork"), 3, writes=True, xfail=SWEPT, run=False),
    Case("CL12-concurrency-100000", (*SWEEP, "--concurrency", "100000"), 2),
    Case("CL11-concurrency-0", (*SWEEP, "--concurrency", "0"), 2),
    Case("CL27-dask-concurrency-minus-1", (*SWEEP, "--backend", "dask", "--concurrency", "-1"), 2),
    Case("BU03-budget-inf", SWEEP, 1, spec("target = ", "budget = inf\ntarget = ")),
    Case("EN06-dev-zero", (*P, "sweep", "/dev/zero", "--yes"), 1),
    Case("EN07-fifo", (*P, "sweep", "fifo.toml", "--yes"), 1, fifo("fifo.toml")),
    Case(
        "EN06-symlink-to-dev-zero", (*P, "sweep", "zero.toml", "--yes"), 1, symlink("zero.toml", "/dev/zero")
    ),
    Case("SD04-cells-5", (*P, "diff", "a", "b"), 1, manifest("a", lambda d: {**d, "cells": 5})),
    Case("SD22-seed-as-text", (*P, "diff", "a", "b"), 1, batches("a", seeds_as_text)),
    # ---- reliability-2.md section 4, groups that passed (spec TOML, names, damaged stores) ---
    Case("SP-target-id-nul", SWEEP, 1, spec('target_id = "agent"', 'target_id = "a\\u0000b"')),
    Case("SP-target-id-ansi", SWEEP, 1, spec('target_id = "agent"', 'target_id = "\\u001b[31m"')),
    Case("SP-target-id-10000", SWEEP, 1, spec('target_id = "agent"', 'target_id = "' + "a" * 10_000 + '"')),
    Case("SP-replicates-bool", SWEEP, 1, spec("replicates = 20", "replicates = true")),
    Case("SP-replicates-inf", SWEEP, 1, spec("replicates = 20", "replicates = inf")),
    Case("SP-replicates-int64-max", SWEEP, 1, spec("replicates = 20", "replicates = 9223372036854775807")),
    Case("SP-nested-axis-values", SWEEP, 1, spec('values = ["a", "b"]', 'values = [["a"], ["b"]]')),
    Case("SP-utf16-spec", SWEEP, 1, write("base.toml", BASE.encode("utf-16"))),
    Case("SP-invalid-utf8", SWEEP, 1, write("base.toml", BASE.encode() + b"# \xff\n")),
    Case("SP-budget-string", SWEEP, 1, spec("target = ", 'budget = "ten"\ntarget = ')),
    Case("SP-budget-negative", SWEEP, 1, spec("target = ", "budget = -1\ntarget = ")),
    Case(
        "SP-chaos-unknown-kind",
        SWEEP,
        1,
        spec("[declare]", '[[chaos.faults]]\nkind = "gremlin"\nrate = 0.1\n\n[declare]'),
    ),
    Case("SP-capture-unknown-key", SWEEP, 1, spec("[declare]", "[capture]\nfrobs = 1\n\n[declare]")),
    Case("SP-declare-empty-outcomes", SWEEP, 1, spec('outcomes = ["done", "fail"]', "outcomes = []")),
    Case(
        "NM07-name-is-another-runs-id",
        (*SWEEP, "--name", "{id:a}"),
        1,
        xfail="NM07: not fixed yet (a name equal to a run id)",
    ),
    Case("SD-manifest-chmod-000", (*P, "diff", "a", "b"), 1, manifest_text("a", "{garbage")),
    Case("SD-episodes-symlink-etc", (*P, "diff", "a", "b"), 1, run_folder("a", "no-episodes")),
    Case("SD-status-bogus", (*P, "diff", "a", "b"), 1, manifest("a", lambda d: {**d, "status": "weird"})),
    Case(
        "SD-outcomes-not-names", (*P, "diff", "a", "b"), 1, manifest("a", lambda d: {**d, "outcomes": "done"})
    ),
    Case(
        "SD-counts-negative",
        (*P, "diff", "a", "b"),
        1,
        manifest("a", lambda d: {**d, "counts": {"done": -1}}),
    ),
    Case("SD-salt-not-text", (*P, "diff", "a", "b"), 1, manifest("a", lambda d: {**d, "salt": 5})),
    Case("IM-import-dev-zero", (*P, "import", "lm-eval", "/dev/zero"), 1),
    Case("IM-import-fifo", (*P, "import", "inspect", "log.eval"), 1, fifo("log.eval")),
    Case("IM-import-missing", (*P, "import", "inspect", "nope.eval"), 1),
    Case(
        "IM-lm-eval-empty-folder",
        (*P, "import", "lm-eval", "empty-logs"),
        1,
        write("empty-logs/notes.txt", "x"),
    ),
]


def resolve(folder: Path, token: str) -> str:
    """`{id:NAME}` in a case's argv: the id of run NAME in that case's store."""
    return _id_of(folder, token[4:-1]) if token.startswith("{id:") else token


PRELOAD = ("pyarrow", "pyarrow.parquet", "numpy", "poisson_prove.sweep", "poisson_prove.comparison")
pytestmark = pytest.mark.timeout(1200)  # the module's one driver run (every case) lands in its first test


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The project every case copies: base.toml, its agents, and a store of runs a, b (paired
    with a) and p (partial), made by the installed script."""
    home = tmp_path_factory.mktemp("home")
    folder = tmp_path_factory.mktemp("base")
    (folder / "base.toml").write_text(BASE)
    (folder / "agent.py").write_text(AGENT)
    (folder / "bad_agents.py").write_text(BAD_AGENTS)
    prove = script_path("poisson-prove")
    env = isolated_env(home)
    for extra in (
        ("--name", "a"),
        ("--name", "b", "--pair-with", "a"),
        ("--name", "p", "--max-rollouts", "10"),
    ):
        done = subprocess.run(
            [prove, *SWEEP, *extra], cwd=folder, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode in (0, 3), done.stderr
    return folder, home


@pytest.fixture(scope="module")
def results(base: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder, home = base
    work = tmp_path_factory.mktemp("cases")
    return run_table(
        CASES, folder, work, home, "poisson_prove.cli:main", "poisson-prove", {}, PRELOAD, resolve
    )


def _param(case: Case) -> Any:
    marks = []
    if case.xfail:
        marks.append(pytest.mark.xfail(strict=True, reason=case.xfail))
    if not case.run:
        marks = [pytest.mark.skip(reason=f"{case.xfail}; not run: its failure is unbounded")]
    return pytest.param(case, id=case.id, marks=marks)


def test_every_case_id_is_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_bad_input(case: Case, results: dict[str, dict[str, Any]]) -> None:
    check(case, results[case.id])


@pytest.mark.parametrize("case_id", ["EN06-dev-zero", "EN07-fifo", "SD04-cells-5", "C01-unknown-flag"])
def test_the_driver_gives_what_the_installed_script_gives(
    case_id: str, base: tuple[Path, Path], results: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """The same case through the installed console script: the same exit code and stderr."""
    import shutil  # only this test copies the base once more

    case = next(c for c in CASES if c.id == case_id)
    folder, home = base
    shutil.copytree(folder, tmp_path / "case", symlinks=True)
    case.setup(tmp_path / "case")
    before = tree(tmp_path / "case")
    real = subprocess.run(
        [script_path("poisson-prove"), *case.argv],
        cwd=tmp_path / "case",
        env=isolated_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    driven = results[case_id]
    assert (real.returncode, real.stderr, real.stdout) == (driven["code"], driven["stderr"], driven["stdout"])
    assert tree(tmp_path / "case") == before
