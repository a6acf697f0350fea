"""Bad inputs to `poisson-prove`, one row per case of the two red-team reports, each with its
expected exit code: exactly one `error:` line when non-zero, no traceback, and nothing written for
a refusal. `test_every_group_holds_as_many_rows_as_its_report_counts` holds every group at its
report's count, so coverage stays measured.

reliability.md lists its cases by id (P01-P32, R01-R26 with R22b/R23b, C01-C34, S01-S18): a row
whose id the report describes is that case; where it names an id only inside a group sentence the
row is rebuilt from that sentence. reliability-2.md section 4 gave counts, not cases, apart from its
unclean ones (RO16, RO17, ..., NM07, SD04, SD22, LM13, IM04, BU03, EN06, EN07): those rows carry the
report's ids, and the others (SP, and the other numbers of RO, CL, NM, SD, IM, LM) were rebuilt
from its group descriptions.

Every case runs in one driver process (bad_inputs_driver.py) that imports the console script's
entry point once and forks a child per case, exactly as the installed script calls it; a few
cases also run through the installed script itself, to hold the driver faithful. Rollout rows run
the smallest sweep that shows the defect (2 conditions x 5 replicates, `--max-mde 1`).
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import isolated_env, once_per_session, script_path
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

def returns_int(cfg, seed):
    return 0

def returns_dict(cfg, seed):
    return {"outcome": "done", "t": 1}

def returns_list(cfg, seed):
    return ["done", 1, 5]

def returns_class(cfg, seed):
    return Episode

def returns_tuple(cfg, seed):
    return ("done", 1)

def t_inf(cfg, seed):
    return Episode("done", math.inf, 5, _ok(cfg))

def t_minus_inf(cfg, seed):
    return Episode("done", -math.inf, 5, _ok(cfg))

def t_complex(cfg, seed):
    return Episode("done", 1j, 5, _ok(cfg))

def t_text(cfg, seed):
    return Episode("done", "1", 5, _ok(cfg))

def horizon_zero(cfg, seed):
    return Episode("done", 0, 0, _ok(cfg))

def horizon_negative(cfg, seed):
    return Episode("done", 1, -5, _ok(cfg))

def horizon_nan(cfg, seed):
    return Episode("done", 1, math.nan, _ok(cfg))

def outcome_none(cfg, seed):
    return Episode(None, 1, 5, _ok(cfg))

def outcome_int(cfg, seed):
    return Episode(1, 1, 5, _ok(cfg))

def meta_cycle(cfg, seed):
    meta = _ok(cfg)
    meta["self"] = meta
    return Episode("done", 1, 5, meta)

def meta_deep(cfg, seed):
    meta = inner = _ok(cfg)
    for _ in range(5000):
        inner["d"] = {}
        inner = inner["d"]
    return Episode("done", 1, 5, meta)

def meta_bytes(cfg, seed):
    return Episode("done", 1, 5, {"case_id": cfg["x"], "b": b"\\x00\\xff"})

def meta_list(cfg, seed):
    return Episode("done", 1, 5, ["not", "a", "dict"])

def huge_message(cfg, seed):
    raise RuntimeError("x" * 10_000_000)

def memory_error(cfg, seed):
    raise MemoryError

def recursion(cfg, seed):
    return recursion(cfg, seed)

def stop_iteration(cfg, seed):
    raise StopIteration

def system_exit_0(cfg, seed):
    raise SystemExit(0)

def generator(cfg, seed):
    yield Episode("done", 1, 5, _ok(cfg))

async def coroutine(cfg, seed):
    return Episode("done", 1, 5, _ok(cfg))

def stdout_10mb(cfg, seed):
    sys.stdout.write("o" * 10_000_000)
    return Episode("done", 1, 5, _ok(cfg))

def stderr_10mb(cfg, seed):
    sys.stderr.write("e" * 10_000_000)
    return Episode("done", 1, 5, _ok(cfg))

def prints_everywhere(cfg, seed):
    import ctypes, atexit
    print("print")
    os.write(1, b"os.write\\n")
    sys.stdout.buffer.write(b"buffer\\n")
    ctypes.CDLL(None).puts(b"puts")
    atexit.register(print, "atexit")
    os.system("echo system")
    return Episode("done", 1, 5, _ok(cfg))

def close_fd1(cfg, seed):
    try:
        os.close(1)
    except OSError:
        pass
    return Episode("done", 1, 5, _ok(cfg))

def forks_waiting_child(cfg, seed):
    # the child blocks on a pipe whose write end this process holds: it ends when the sweep does
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(write)
        os.read(read, 1)
        os._exit(0)
    os.close(read)
    _HELD.append(write)
    return Episode("done", 1, 5, _ok(cfg))

_HELD = []

def hangs(cfg, seed):
    threading.Event().wait()

def hangs_on_a(cfg, seed):
    if cfg["x"] == "a":
        threading.Event().wait()
    return Episode("done", 1, 5, _ok(cfg))

def osexit_on_a(cfg, seed):
    if cfg["x"] == "a":
        os._exit(0)
    return Episode("done", 1, 5, _ok(cfg))

def meta_object_b(cfg, seed):
    return Episode("done", 1, 5, {"x": object()})
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
    """A sweep of the smallest size that shows a rollout's misbehaviour: 2 conditions x 5
    replicates (fewer is refused as underpowered)."""
    return (*SWEEP, "--replicates", "5", "--target", f"bad_agents:{name}")


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
                    elif change == "empty":
                        batch.write_bytes(b"")
                    else:
                        pq.write_table(change(pq.read_table(batch)), batch)
                return
        raise AssertionError(run)

    return setup


def seeds_as_text(table: Any) -> Any:
    import pyarrow as pa  # only the store-damage cases rewrite Parquet

    seeds = pa.array([str(s) for s in table.column("seed").to_pylist()])
    return table.set_column(table.schema.get_field_index("seed"), "seed", seeds)


def outcome_weird(table: Any) -> Any:
    import pyarrow as pa  # only the store-damage cases rewrite Parquet

    column = pa.array(["weird"] * table.num_rows, type=table.schema.field("outcome").type)
    return table.set_column(table.schema.get_field_index("outcome"), "outcome", column)


def replicate_huge(table: Any) -> Any:
    import pyarrow as pa  # only the store-damage cases rewrite Parquet

    column = pa.array([10**9] * table.num_rows, type=table.schema.field("replicate").type)
    return table.set_column(table.schema.get_field_index("replicate"), "replicate", column)


def doubled(table: Any) -> Any:
    import pyarrow as pa  # only the store-damage cases rewrite Parquet

    return pa.concat_tables([table, table])


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
                elif action == "manifest-folder":
                    path.unlink()
                    path.mkdir()
                elif action == "episodes-etc":
                    shutil.rmtree(path.parent / "episodes")
                    (path.parent / "episodes").symlink_to("/etc")
                elif action == "episodes-file":
                    shutil.rmtree(path.parent / "episodes")
                    (path.parent / "episodes").write_text("x")
                elif action == "batch-passwd":
                    (path.parent / "episodes" / "batch-999997-ffffff.parquet").symlink_to("/etc/passwd")
                elif action == "empty-batch":
                    (path.parent / "episodes" / "batch-999996-aaaaaa.parquet").write_bytes(b"")
                elif action == "events-escape":
                    with (path.parent / "events.jsonl").open("a") as events:
                        events.write('{"event": "batch", "file": "../../../etc/passwd", "rows": 1}\n')
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


AXIS = 'type = "categorical"\nvalues = ["a", "b"]'
DECLARE = '[declare]\noutcomes = ["done", "fail"]\nfailures = ["fail"]\nsuccesses = ["done"]\n'


def chaos(fault: str) -> tuple[str, str]:
    return "[declare]", f"[[chaos.faults]]\n{fault}\n\n[declare]"


def capture(body: str) -> tuple[str, str]:
    return "[declare]", f"[capture]\n{body}\n\n[declare]"


# The report gave this group's count, not its cases: these rows are rebuilt from its description.
SPEC_EDITS: list[tuple[str, str, str]] = [
    (f"SP{11 + n:02d}-{slug}", old, new)
    for n, (slug, old, new) in enumerate(
        [
            ("target-id-nul", 'target_id = "agent"', 'target_id = "a\\u0000b"'),
            ("target-id-ansi", 'target_id = "agent"', 'target_id = "\\u001b[31m"'),
            ("target-id-10000", 'target_id = "agent"', 'target_id = "' + "a" * 10_000 + '"'),
            ("target-id-newline", 'target_id = "agent"', 'target_id = "a\\nb"'),
            ("target-id-number", 'target_id = "agent"', "target_id = 5"),
            ("target-id-empty", 'target_id = "agent"', 'target_id = ""'),
            ("replicates-bool", "replicates = 20", "replicates = true"),
            ("replicates-inf", "replicates = 20", "replicates = inf"),
            ("replicates-nan", "replicates = 20", "replicates = nan"),
            ("replicates-int64-max", "replicates = 20", "replicates = 9223372036854775807"),
            ("replicates-1e20-float", "replicates = 20", "replicates = 1e20"),
            ("replicates-beyond-int64", "replicates = 20", "replicates = 100000000000000000000"),
            ("replicates-array", "replicates = 20", "replicates = [20]"),
            ("replicates-table", "replicates = 20", "replicates = {n = 20}"),
            ("replicates-date", "replicates = 20", "replicates = 2026-01-01"),
            ("t-unit-number", 't_unit = "steps"', "t_unit = 5"),
            ("t-unit-empty", 't_unit = "steps"', 't_unit = ""'),
            ("target-empty", '"agent:rollout"', '""'),
            ("target-array", '"agent:rollout"', '["agent:rollout"]'),
            ("target-no-function", "agent:rollout", "agent:"),
            ("target-no-module", "agent:rollout", ":rollout"),
            ("target-path", "agent:rollout", "../agent:rollout"),
            ("key-twice", "replicates = 20", "replicates = 20\nreplicates = 30"),
            ("unknown-top-table", "[declare]", "[axis.x]\ntype = 1\n\n[declare]"),
            ("axes-not-table", "[axes.x]\n" + AXIS, "[axes]\nx = 5"),
            ("axis-type-missing", 'type = "categorical"\n', ""),
            ("axis-type-number", 'type = "categorical"', "type = 5"),
            ("axis-values-missing", 'values = ["a", "b"]\n', ""),
            ("axis-values-string", 'values = ["a", "b"]', 'values = "ab"'),
            ("axis-values-mixed", 'values = ["a", "b"]', 'values = ["a", 1]'),
            ("axis-values-bools", 'values = ["a", "b"]', "values = [true, false]"),
            ("axis-values-empty-string", 'values = ["a", "b"]', 'values = ["", "b"]'),
            ("continuous-nan", AXIS, 'type = "continuous"\nvalues = [nan, 1.0]'),
            ("continuous-inf", AXIS, 'type = "continuous"\nvalues = [inf, 1.0]'),
            ("continuous-zero-twice", AXIS, 'type = "continuous"\nvalues = [0, 0.0]'),
            ("integer-bool", AXIS, 'type = "integer"\nvalues = [true, 2]'),
            ("integer-text", AXIS, 'type = "integer"\nvalues = ["1", "2"]'),
            ("axis-name-empty", "[axes.x]", '[axes.""]'),
            ("axis-unknown-key-typo", 'values = ["a", "b"]', 'valuez = ["a", "b"]'),
            ("values-from-missing", 'values = ["a", "b"]', 'values_from = "nope.jsonl"'),
            ("values-and-values-from", 'values = ["a", "b"]', 'values = ["a"]\nvalues_from = "x.jsonl"'),
            ("cases-not-bool", 'values = ["a", "b"]', 'values = ["a", "b"]\ncases = "yes"'),
            ("cases-on-continuous", AXIS, 'type = "continuous"\nvalues = [1.0, 2.0]\ncases = true'),
            ("declare-missing", DECLARE, ""),
            ("declare-not-table", DECLARE, "declare = 5\n"),
            ("declare-outcomes-string", 'outcomes = ["done", "fail"]', 'outcomes = "done"'),
            (
                "declare-outcomes-repeated",
                'outcomes = ["done", "fail"]',
                'outcomes = ["done", "fail", "done"]',
            ),
            ("declare-outcomes-numbers", 'outcomes = ["done", "fail"]', "outcomes = [1, 2]"),
            ("declare-failures-string", 'failures = ["fail"]', 'failures = "fail"'),
            ("declare-failures-missing", 'failures = ["fail"]\n', ""),
            ("declare-unknown-key", 'successes = ["done"]', 'successes = ["done"]\nfailure = ["fail"]'),
            ("chaos-rate-negative", *chaos('kind = "timeout"\nrate = -0.1')),
            ("chaos-rate-nan", *chaos('kind = "timeout"\nrate = nan')),
            ("chaos-rate-text", *chaos('kind = "timeout"\nrate = "often"')),
            ("chaos-kind-missing", *chaos("rate = 0.1")),
            ("chaos-status-missing", *chaos('kind = "http_status"\nrate = 0.1')),
            ("chaos-status-200", *chaos('kind = "http_status"\nrate = 0.1\nstatus = 200')),
            ("chaos-latency-no-seconds", *chaos('kind = "latency"\nrate = 0.1')),
            ("chaos-seconds-negative", *chaos('kind = "latency"\nrate = 0.1\nseconds = -1')),
            ("chaos-rate-axis-unknown", *chaos('kind = "timeout"\nrate_axis = "nope"')),
            ("chaos-rate-and-rate-axis", *chaos('kind = "timeout"\nrate = 0.1\nrate_axis = "x"')),
            ("chaos-unknown-key", *chaos('kind = "timeout"\nrate = 0.1\nrat = 1')),
            ("chaos-hosts-string", *chaos('kind = "timeout"\nrate = 0.1\nhosts = "api.openai.com"')),
            ("chaos-seed-text", "[declare]", '[chaos]\nseed = "x"\n\n[declare]'),
            ("capture-instrument-string", *capture('instrument = "openai"\nmax_observation_bytes = 100')),
            (
                "capture-instrument-unknown",
                *capture('instrument = ["nothing-here"]\nmax_observation_bytes = 100'),
            ),
            ("capture-max-bytes-zero", *capture('instrument = ["openai"]\nmax_observation_bytes = 0')),
            ("capture-content-text", *capture('content = "yes"')),
            ("budget-zero", "target = ", "budget = 0\ntarget = "),
            ("budget-nan", "target = ", "budget = nan\ntarget = "),
            ("budget-bool", "target = ", "budget = true\ntarget = "),
            ("budget-string", "target = ", 'budget = "ten"\ntarget = '),
            ("budget-negative", "target = ", "budget = -1\ntarget = "),
        ]
    )
]


# Spec rows that find a defect still open (strict: each must still fail).
SPEC_XFAILS: dict[str, str] = {}

# Spec rows whose expectation is not "exit 1, nothing written": the command, code and what it shows.
# SP76: an instrumentor that is not installed is not refused, the docs promise (prove-your-own-agent:
# "the plan's capture line and the done line name it, the run goes on without its spans"); a name
# installed on a Dask or Modal worker only is not installed here. So the plan names it, exit 0,
# and the dry run writes nothing.
DRY_RUN = (*P, "sweep", "base.toml", "--dry-run", "--max-mde", "1")
SPEC_RUNS: dict[str, tuple[tuple[str, ...], int, str]] = {
    "SP76-capture-instrument-unknown": (DRY_RUN, 0, "capture nothing-here (not installed: no spans)"),
}


def spec_case(case_id: str, old: str, new: str) -> Case:
    """A SPEC_EDITS row: the sweep refused (exit 1, nothing written) unless SPEC_RUNS says otherwise."""
    argv, code, shows = SPEC_RUNS.get(case_id, (SWEEP, 1, ""))
    return Case(case_id, argv, code, spec(old, new), xfail=SPEC_XFAILS.get(case_id), shows=shows)


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
    Case("R02-osexit-json", (*target("osexit"), "--json"), 3, writes=True),
    Case("R03-returns-none", target("returns_none"), 3, writes=True),
    Case("R04-returns-str", target("returns_str"), 3, writes=True),
    Case("R05-t-past-horizon", target("t_past_horizon"), 3, writes=True),
    Case("R06-t-negative", target("t_negative"), 3, writes=True),
    Case("R07-t-nan", target("t_nan"), 3, writes=True),
    Case("R08-undeclared-outcome", target("undeclared"), 3, writes=True),
    Case("R09-prints-json", (*target("prints"), "--json"), 0, writes=True),
    Case("R12-sys-exit", target("sys_exit"), 3, writes=True),
    Case("R13-keyboard-interrupt", target("keyboard"), 130, writes=True),
    Case("R10-prints-everywhere-json", (*target("prints_everywhere"), "--json"), 0, writes=True),
    Case(
        "R11-prints-everywhere-timeout-json",
        (*target("prints_everywhere"), "--json", "--episode-timeout", "30"),
        0,
        writes=True,
    ),
    Case("R14-returns-tuple", target("returns_tuple"), 3, writes=True),
    Case("R15-t-inf", target("t_inf"), 3, writes=True),
    Case("R16-t-text", target("t_text"), 3, writes=True),
    Case("R17-horizon-0", target("horizon_zero"), 3, writes=True),
    Case("R18-osexit-timeout", (*target("osexit"), "--episode-timeout", "30"), 3, writes=True),
    Case("R19-some-osexit-timeout", (*target("osexit_on_a"), "--episode-timeout", "30"), 0, writes=True),
    Case("R20-all-hang-timeout", (*target("hangs"), "--episode-timeout", "0.5"), 3, writes=True),
    Case("R21-some-hang-timeout", (*target("hangs_on_a"), "--episode-timeout", "0.5"), 0, writes=True),
    Case("R22-meta-object", target("meta_object"), 3, writes=True),
    Case("R22b-meta-object-timeout", (*target("meta_object"), "--episode-timeout", "30"), 3, writes=True),
    Case("R23-meta-nan", target("meta_nan"), 3, writes=True),
    Case("R23b-meta-nan-timeout", (*target("meta_nan"), "--episode-timeout", "30"), 3, writes=True),
    Case("R24-prints-10mb-total", target("stdout_10mb"), 0, writes=True),
    Case("R25-stderr-10mb-total", target("stderr_10mb"), 0, writes=True),
    Case("R26-sys-exit-json", (*target("sys_exit"), "--json"), 3, writes=True),
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
    Case("C31-bad-episode", (*P, "inspect", "a", "--episode", "x/y/z"), 2),
    Case(
        "C32-modal-no-token",
        (*SWEEP, "--backend", "modal"),
        1,
        env={"MODAL_TOKEN_ID": "", "MODAL_TOKEN_SECRET": ""},
    ),
    # C33: runs of specs whose axis values only partly overlap (x = a, b against a, c) are
    # compared on the conditions both ran, with a warning naming each one run only has: the
    # docs promise it (docs/comparing.md, "What is compared"); only runs sharing no condition
    # are refused (exit 1), so the report's exit 1 does not hold for these two runs.
    Case(
        "C33-diff-different-specs",
        (*P, "diff", "a", "other"),
        0,
        shows='warning: condition x b ran only in "a"; it is not compared',
    ),
    Case("C34-mcnemar-unpaired", (*P, "diff", "a", "p", "--method", "mcnemar"), 1),
    # ---- reliability.md: damaged run store (S01-S18) ---------------------------------------
    Case("S01-runs-garbage-manifest", (*P, "runs"), 0, manifest_text("p", "{garbage")),
    Case("S02-diff-garbage-manifest", (*P, "diff", "a", "b"), 1, manifest_text("a", "{garbage")),
    Case(
        "S03-resume-garbage-manifest",
        (*P, "sweep", "--resume", "p", "--yes"),
        1,
        manifest_text("p", "{garbage"),
    ),
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
    Case("S11-zero-byte-batch-diff", (*P, "diff", "a", "b"), 1, batches("a", "empty")),
    Case("S12-foreign-parquet", (*P, "diff", "a", "b"), 1, run_folder("a", "foreign-parquet")),
    Case("S13-truncated-batch-resume", (*P, "sweep", "--resume", "p", "--yes"), 1, batches("p", None)),
    Case("S14-inspect-garbage-manifest", (*P, "inspect", "a"), 1, manifest_text("a", "{garbage")),
    Case("S15-zero-byte-batch-inspect", (*P, "inspect", "a"), 1, batches("a", "empty")),
    Case("S16-copied-batch", (*P, "diff", "a", "b", "--json"), 1, run_folder("a", "copy-batch")),
    Case("S17-diff-manifest-list", (*P, "diff", "a", "b"), 1, manifest_text("a", "[]")),
    Case(
        "S18-replicates-lots",
        (*P, "sweep", "--resume", "p", "--yes"),
        1,
        manifest("p", lambda d: {**d, "replicates": "lots"}),
    ),
    # ---- reliability-2.md section 4 ---------------------------------------------------------
    # spec TOML (86): BU03, EN06 and EN07 are the report's ids; the SP rows are rebuilt from its
    # group description (types, unicode, huge values, axes, [declare], [chaos], [capture], budget,
    # encodings, special files).
    *[spec_case(case_id, old, new) for case_id, old, new in SPEC_EDITS],
    Case("BU03-budget-inf", SWEEP, 1, spec("target = ", "budget = inf\ntarget = ")),
    Case("EN06-dev-zero", (*P, "sweep", "/dev/zero", "--yes"), 1),
    Case("EN07-fifo", (*P, "sweep", "fifo.toml", "--yes"), 1, fifo("fifo.toml")),
    Case(
        "SP01-symlink-to-dev-zero", (*P, "sweep", "zero.toml", "--yes"), 1, symlink("zero.toml", "/dev/zero")
    ),
    Case("SP02-utf16", SWEEP, 1, write("base.toml", BASE.encode("utf-16"))),
    Case("SP03-invalid-utf8", SWEEP, 1, write("base.toml", BASE.encode() + b"# \xff\n")),
    Case("SP04-nul-byte", SWEEP, 1, write("base.toml", BASE.encode() + b"\x00\n")),
    Case(
        "SP05-crlf-bad-value",
        SWEEP,
        1,
        write("base.toml", BASE.replace("= 20", '= "x"').replace("\n", "\r\n")),
    ),
    Case(
        "SP06-big-comment",
        SWEEP,
        1,
        write("base.toml", "#" + "c" * 20_000_000 + "\n" + BASE + "replicate = 1\n"),
    ),
    Case("SP07-dev-null", (*P, "sweep", "/dev/null", "--yes"), 1),
    Case("SP08-folder-named-toml", (*P, "sweep", "dir.toml", "--yes"), 1, write("dir.toml/x", "")),
    Case("SP09-symlink-loop", (*P, "sweep", "loop.toml", "--yes"), 1, symlink("loop.toml", "loop.toml")),
    Case("SP10-bom-bad-value", SWEEP, 1, write("base.toml", "\ufeff" + BASE.replace("= 20", "= -1"))),
    # rollouts that misbehave (45): RO01-RO45, the report's ids where it gives them
    Case("RO01-returns-none", target("returns_none"), 3, writes=True),
    Case("RO02-returns-int", target("returns_int"), 3, writes=True),
    Case("RO03-returns-dict", target("returns_dict"), 3, writes=True),
    Case("RO04-returns-list", target("returns_list"), 3, writes=True),
    Case("RO05-returns-class", target("returns_class"), 3, writes=True),
    Case("RO06-returns-pair", target("returns_tuple"), 3, writes=True),
    Case("RO07-t-nan", target("t_nan"), 3, writes=True),
    Case("RO08-t-inf", target("t_inf"), 3, writes=True),
    Case("RO09-t-minus-inf", target("t_minus_inf"), 3, writes=True),
    Case("RO10-t-negative", target("t_negative"), 3, writes=True),
    Case("RO11-t-complex", target("t_complex"), 3, writes=True),
    Case("RO12-t-text", target("t_text"), 3, writes=True),
    Case("RO13-outcome-none", target("outcome_none"), 3, writes=True),
    Case("RO14-outcome-int", target("outcome_int"), 3, writes=True),
    Case("RO15-meta-cycle", target("meta_cycle"), 3, writes=True),
    Case("RO16-surrogate-meta", target("surrogate"), 3, writes=True),
    Case("RO17-base-exception", target("base_exception"), 3, writes=True),
    Case("RO18-meta-5000-deep", target("meta_deep"), 3, writes=True),
    Case("RO19-meta-bytes", target("meta_bytes"), 3, writes=True),
    Case("RO20-meta-list", target("meta_list"), 3, writes=True),
    Case("RO21-10mb-message", target("huge_message"), 3, writes=True),
    Case("RO22-str-raises", target("bad_str"), 3, writes=True),
    Case("RO23-sys-exit-bye", target("sys_exit"), 3, writes=True),
    Case("RO24-memory-error", target("memory_error"), 3, writes=True),
    Case("RO25-recursion-error", target("recursion"), 3, writes=True),
    Case("RO26-keyboard-interrupt", target("keyboard"), 130, writes=True),
    Case("RO27-fork-bomb", target("fork"), 3, writes=True, xfail=SWEPT, run=False),
    Case("RO28-stdout-10mb-json", (*target("stdout_10mb"), "--json"), 0, writes=True),
    Case("RO29-stderr-10mb", target("stderr_10mb"), 0, writes=True),
    Case("RO30-sigkill-self", target("sigkill"), 3, writes=True),
    Case("RO31-sigterm-self", target("sigterm"), 3, writes=True),
    Case("RO32-close-fd-1-json", (*target("close_fd1"), "--json"), 0, writes=True),
    Case("RO33-chdir", target("chdir"), 0, writes=True),
    Case("RO34-forks-waiting-child", target("forks_waiting_child"), 0, writes=True),
    Case("RO35-all-hang-timeout", (*target("hangs"), "--episode-timeout", "0.5"), 3, writes=True),
    Case("RO36-half-hang-timeout", (*target("hangs_on_a"), "--episode-timeout", "0.5"), 0, writes=True),
    Case("RO37-horizon-negative", target("horizon_negative"), 3, writes=True),
    Case("RO38-horizon-nan", target("horizon_nan"), 3, writes=True),
    Case("RO39-generator", target("generator"), 3, writes=True),
    Case("RO40-coroutine", target("coroutine"), 0, writes=True),
    Case("RO41-stop-iteration", target("stop_iteration"), 3, writes=True),
    Case("RO42-system-exit-0", target("system_exit_0"), 3, writes=True),
    Case("RO43-posix-exit", (*target("posix_exit"), "--json"), 3, writes=True),
    Case("RO44-ctypes-exit", (*target("ctypes_exit"), "--json"), 3, writes=True),
    Case("RO45-thread-exit", (*target("thread_exit"), "--json"), 3, writes=True),
    # CLI flags and run references (35): CL11, CL12 and CL27 are the report's ids
    Case("CL01-concurrency-abc", (*SWEEP, "--concurrency", "abc"), 2),
    Case("CL02-concurrency-minus-1", (*SWEEP, "--concurrency", "-1"), 2),
    Case("CL03-batch-size-minus-1", (*SWEEP, "--batch-size", "-1"), 2),
    Case("CL04-batch-size-abc", (*SWEEP, "--batch-size", "abc"), 2),
    Case("CL05-max-mde-0", (*P, "sweep", "base.toml", "--yes", "--max-mde", "0"), 2),
    Case("CL06-max-mde-nan", (*P, "sweep", "base.toml", "--yes", "--max-mde", "nan"), 2),
    Case("CL07-max-mde-abc", (*P, "sweep", "base.toml", "--yes", "--max-mde", "abc"), 2),
    Case("CL08-max-rollouts-minus-1", (*SWEEP, "--max-rollouts", "-1"), 2),
    Case("CL09-max-rollouts-abc", (*SWEEP, "--max-rollouts", "abc"), 2),
    Case("CL10-replicates-0", (*SWEEP, "--replicates", "0"), 2),
    Case("CL11-concurrency-0", (*SWEEP, "--concurrency", "0"), 2),
    Case("CL12-concurrency-100000", (*SWEEP, "--concurrency", "100000"), 2),
    Case("CL13-replicates-minus-3", (*SWEEP, "--replicates", "-3"), 2),
    Case("CL14-replicates-1e9-text", (*SWEEP, "--replicates", "1e9"), 2),
    Case("CL15-timeout-0", (*SWEEP, "--episode-timeout", "0"), 2),
    Case("CL16-timeout-abc", (*SWEEP, "--episode-timeout", "abc"), 2),
    Case("CL17-salt-31-digits", (*SWEEP, "--salt", "0" * 31), 2),
    Case("CL18-resume-and-spec", (*P, "sweep", "base.toml", "--resume", "p", "--yes"), 0, writes=True),
    Case("CL19-resume-and-pair-with", (*P, "sweep", "--resume", "p", "--pair-with", "a", "--yes"), 2),
    Case("CL20-pair-with-latest-empty-store", ("--store", "empty", *S, "--pair-with", "latest"), 1),
    Case("CL21-diff-ambiguous-prefix", (*P, "diff", "20", "b"), 1),
    Case("CL22-diff-one-run", (*P, "diff", "a"), 0, writes=True),
    Case("CL23-diff-three-runs", (*P, "diff", "a", "b", "p"), 2),
    Case("CL24-inspect-episode-abc", (*P, "inspect", "a", "--episode", "abc"), 2),
    Case("CL25-inspect-episode-out-of-range", (*P, "inspect", "a", "--episode", "0/999999"), 1),
    Case("CL26-diff-q-0", (*P, "diff", "a", "b", "--q", "0"), 2),
    Case("CL27-dask-concurrency-minus-1", (*SWEEP, "--backend", "dask", "--concurrency", "-1"), 2),
    Case("CL28-diff-q-nan", (*P, "diff", "a", "b", "--q", "nan"), 2),
    Case("CL29-check-q-negative", (*P, "check", "a", "b", "--q", "-1"), 2),
    Case("CL30-runs-extra-argument", (*P, "runs", "a"), 2),
    Case("CL31-verb-typo", (*P, "sweeep", "base.toml"), 2),
    Case("CL32-store-empty-text", ("--store", "", "runs"), 2, shows="argument --store: expects a path"),
    Case("CL33-check-max-mde-2", (*P, "check", "a", "b", "--max-mde", "2"), 2),
    Case("CL34-import-no-tool", (*P, "import"), 2),
    Case("CL35-import-unknown-tool", (*P, "import", "wandb", "x"), 2),
    # run names (10): NM07 is the report's id
    Case("NM01-name-blank", (*SWEEP, "--name", "   "), 2),
    Case("NM02-name-latest", (*SWEEP, "--name", "latest"), 2),
    Case("NM03-name-id-prefix", (*SWEEP, "--name", "{prefix:a}"), 2),
    Case("NM04-name-taken", (*SWEEP, "--name", "a"), 1),
    Case(
        "NM05-name-newline",
        (*target("returns_none"), "--name", "x\ny"),
        2,
        shows="non-printing character '\\n'",
    ),
    Case(
        "NM06-name-ansi",
        (*target("returns_none"), "--name", "\x1b[31mred"),
        2,
        shows="non-printing character '\\x1b'",
    ),
    Case("NM07-name-is-another-runs-id", (*SWEEP, "--name", "{id:a}"), 2),
    Case(
        "NM08-name-1000-chars",
        (*target("returns_none"), "--name", "n" * 1000),
        2,
        shows="1000 characters long",
    ),
    Case("NM09-name-path", (*target("returns_none"), "--name", "../../x"), 3, writes=True),
    Case("NM10-name-unicode", (*target("returns_none"), "--name", "エージェント ✓"), 3, writes=True),
    # damaged stores (25): SD04 and SD22 are the report's ids
    Case("SD01-truncated-batch-check", (*P, "check", "a", "b"), 1, batches("a", None)),
    Case("SD02-manifest-is-folder", (*P, "diff", "a", "b"), 1, run_folder("a", "manifest-folder")),
    Case("SD03-name-is-number", (*P, "diff", "a", "b"), 1, manifest("a", lambda d: {**d, "name": 5})),
    Case("SD04-cells-5", (*P, "diff", "a", "b"), 1, manifest("a", lambda d: {**d, "cells": 5})),
    Case("SD05-status-bogus", (*P, "diff", "a", "b"), 1, manifest("a", lambda d: {**d, "status": "weird"})),
    Case(
        "SD06-outcomes-not-names",
        (*P, "diff", "a", "b"),
        1,
        manifest("a", lambda d: {**d, "outcomes": "done"}),
    ),
    Case(
        "SD07-counts-negative",
        (*P, "diff", "a", "b"),
        1,
        manifest("a", lambda d: {**d, "counts": {"done": -1}}),
    ),
    Case("SD08-salt-not-text", (*P, "diff", "a", "b"), 1, manifest("a", lambda d: {**d, "salt": 5})),
    Case("SD09-episodes-symlink-etc", (*P, "diff", "a", "b"), 1, run_folder("a", "episodes-etc")),
    Case("SD10-batch-symlink-passwd", (*P, "diff", "a", "b"), 1, run_folder("a", "batch-passwd")),
    Case("SD11-run-folder-is-file", (*P, "runs"), 0, write("ST/20200101T000000-abcdef", "x")),
    Case(
        "SD12-events-name-escape",
        (*P, "sweep", "--resume", "p", "--yes"),
        0,
        run_folder("p", "events-escape"),
        writes=True,
    ),
    Case("SD13-rows-bad-outcome", (*P, "diff", "a", "b"), 1, batches("a", outcome_weird)),
    Case("SD14-rows-bad-replicate", (*P, "diff", "a", "b"), 1, batches("a", replicate_huge)),
    Case(
        "SD15-spec-not-table",
        (*P, "diff", "a", "b"),
        0,
        manifest("a", lambda d: {**d, "spec": "x"}),
        writes=True,
    ),
    Case(
        "SD16-replicates-negative",
        (*P, "sweep", "--resume", "p", "--yes"),
        1,
        manifest("p", lambda d: {**d, "replicates": -1}),
    ),
    Case(
        "SD17-target-not-text",
        (*P, "sweep", "--resume", "p", "--yes"),
        1,
        manifest("p", lambda d: {**d, "target": 5}),
    ),
    Case("SD18-manifest-null", (*P, "runs"), 0, manifest_text("p", "null")),
    Case(
        "SD19-salt-short",
        (*P, "sweep", "--resume", "p", "--yes"),
        1,
        manifest("p", lambda d: {**d, "salt": "ab"}),
    ),
    Case("SD20-episodes-is-file", (*P, "diff", "a", "b"), 1, run_folder("a", "episodes-file")),
    Case(
        "SD21-empty-batch-resume", (*P, "sweep", "--resume", "p", "--yes"), 1, run_folder("p", "empty-batch")
    ),
    Case("SD22-seed-as-text", (*P, "diff", "a", "b"), 1, batches("a", seeds_as_text)),
    Case(
        "SD23-paired-with-unknown",
        (*P, "diff", "a", "b"),
        0,
        manifest("b", lambda d: {**d, "paired_with": "nope"}),
    ),
    Case("SD24-duplicate-rows", (*P, "diff", "a", "b"), 1, batches("a", doubled)),
    Case("SD25-created-not-text", (*P, "runs"), 0, manifest("p", lambda d: {**d, "created": 5})),
]


# ---- reliability-2.md section 4, imports: small logs written byte by byte by each case's setup
# (never by Inspect or lm-eval, so the rows stay cheap). A minimal log of either tool imports
# cleanly (IM19, LM16); every other row damages one thing of it.
INSPECT_HEADER = {
    "version": 2,
    "status": "success",
    "eval": {
        "created": "2026-12-01T00:00:00+00:00",
        "task": "t",
        "dataset": {},
        "model": "mockllm/model",
        "config": {},
    },
}


def inspect_sample(number: int, value: Any = "C", **extra: Any) -> dict[str, Any]:
    return {
        "id": f"q{number}",
        "epoch": 1,
        "input": "x",
        "target": "y",
        "scores": {"includes": {"value": value}},
        **extra,
    }


SAMPLES3 = [inspect_sample(0, "C"), inspect_sample(1, "I"), inspect_sample(2, "C")]


def inspect_json(document: Any = None, *, text: str | bytes | None = None, name: str = "log.json") -> Any:
    """An Inspect AI `.json` log: the minimal header with three samples, or `document`, or raw `text`."""
    if text is None:
        text = json.dumps({**INSPECT_HEADER, "samples": SAMPLES3} if document is None else document)
    return write(f"logs/{name}", text)


def _zip(members: dict[str, Any], method: int = 8) -> bytes:
    import io  # only the .eval cases build an archive
    import zipfile  # only the .eval cases build an archive

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for member, content in members.items():
            data = content if isinstance(content, (str, bytes)) else json.dumps(content)
            archive.writestr(member, data)
    return buffer.getvalue()


def eval_members(samples: list[dict[str, Any]] = SAMPLES3, **more: Any) -> dict[str, Any]:
    members: dict[str, Any] = {"header.json": INSPECT_HEADER}
    members.update({f"samples/{s['id']}_epoch_{s['epoch']}.json": s for s in samples})
    members.update(more)
    return members


def patched(data: bytes, member: str, offsets: tuple[int, int], value: bytes) -> bytes:
    """`data` (a zip) with `value` written at `offsets` (local header, central entry) of `member`:
    a forged declared size (22, 24) or compression method (8, 10)."""
    import io  # only the .eval cases forge an archive
    import zipfile  # only the .eval cases forge an archive

    out = bytearray(data)
    local = zipfile.ZipFile(io.BytesIO(data)).getinfo(member).header_offset
    name = member.encode()
    central = next(
        at
        for at in range(len(out) - 4)
        if out[at : at + 4] == b"PK\x01\x02" and out[at + 46 : at + 46 + len(name)] == name
    )
    for start, offset in ((local, offsets[0]), (central, offsets[1])):
        out[start + offset : start + offset + len(value)] = value
    return bytes(out)


def inspect_eval(members: dict[str, Any] | None = None, *, data: bytes | None = None) -> Any:
    """An Inspect AI `.eval` log (a zip, deflated as Inspect's reader also reads): the minimal
    header and three samples, or `members`, or raw `data`."""
    return write(
        "logs/log.eval", _zip(eval_members() if members is None else members) if data is None else data
    )


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


IMPORT = (*P, "import")
INSPECT = (*IMPORT, "inspect", "logs/log.eval")
INSPECT_JSON = (*IMPORT, "inspect", "logs/log.json")
LM_STAMP = "2026-12-01T00-00-00.000000"
LM_FILE = f"out/samples_t_{LM_STAMP}.jsonl"
LM_EVAL = (*IMPORT, "lm-eval", "out")


def lm_record(doc: Any, acc: Any = 1, **extra: Any) -> dict[str, Any]:
    return {"doc_id": doc, "doc_hash": f"h{doc}", "filter": "none", "metrics": ["acc"], "acc": acc, **extra}


LM3 = [lm_record(0, 1), lm_record(1, 0), lm_record(2, 1)]


def lm_samples(
    records: list[Any] | None = None, *, text: str | bytes | None = None, results: str | None = None
) -> Any:
    """lm_eval's `--output_path` folder `out`: one samples file of three documents, or of
    `records` (one JSON line each), or raw `text`; `results` the results file beside it."""
    if text is None:
        text = "".join(json.dumps(r) + "\n" for r in (LM3 if records is None else records))
    setups = [write(LM_FILE, text)]
    if results is not None:
        setups.append(write(f"out/results_{LM_STAMP}.json", results))
    return both(*setups)


CASES += [
    # Inspect AI logs
    Case("IM01-eval-truncated", INSPECT, 1, inspect_eval(data=_zip(eval_members())[:600])),
    Case("IM02-eval-empty", INSPECT, 1, inspect_eval(data=b"")),
    Case("IM03-eval-not-zip", INSPECT, 1, inspect_eval(data=b"this is not a zip archive\n" * 20)),
    Case(
        "IM04-zip-bomb-declares-1-gib",
        INSPECT,
        1,
        inspect_eval(
            data=patched(
                _zip(eval_members()), "samples/q0_epoch_1.json", (22, 24), (1 << 30).to_bytes(4, "little")
            )
        ),
        shows="is refused before it is inflated",
    ),
    Case(
        "IM05-member-inflates-past-declared",
        INSPECT,
        1,
        inspect_eval(
            data=patched(
                _zip(eval_members(**{"samples/q9_epoch_1.json": " " * 200_000})),
                "samples/q9_epoch_1.json",
                (22, 24),
                (100).to_bytes(4, "little"),
            )
        ),
        shows="inflates past its declared",
    ),
    Case(
        "IM06-member-escapes",
        INSPECT,
        0,
        inspect_eval(eval_members(**{"../../escaped.txt": "x"})),
        writes=True,
    ),
    Case("IM07-eval-header-not-json", INSPECT, 1, inspect_eval(eval_members(**{"header.json": "{not json"}))),
    Case(
        "IM08-eval-header-wrong-schema",
        INSPECT,
        1,
        inspect_eval(eval_members(**{"header.json": {**INSPECT_HEADER, "eval": "t"}})),
    ),
    Case(
        "IM09-eval-no-header",
        INSPECT,
        1,
        inspect_eval({k: v for k, v in eval_members().items() if k != "header.json"}),
    ),
    Case("IM10-eval-no-samples", INSPECT, 1, inspect_eval({"header.json": INSPECT_HEADER})),
    Case(
        "IM11-eval-sample-wrong-schema",
        INSPECT,
        1,
        inspect_eval(eval_members([{**inspect_sample(0), "scores": ["C"]}])),
    ),
    Case(
        "IM12-eval-unknown-compression",
        INSPECT,
        1,
        inspect_eval(
            data=patched(_zip(eval_members()), "samples/q0_epoch_1.json", (8, 10), (12).to_bytes(2, "little"))
        ),
    ),
    Case(
        "IM13-json-truncated",
        INSPECT_JSON,
        1,
        inspect_json(text=json.dumps({**INSPECT_HEADER, "samples": SAMPLES3})[:150]),
    ),
    Case("IM14-json-wrong-schema", INSPECT_JSON, 1, inspect_json([1, 2, 3])),
    Case(
        "IM15-json-no-eval",
        INSPECT_JSON,
        1,
        inspect_json({"version": 2, "status": "success", "samples": SAMPLES3}),
    ),
    Case("IM16-json-200k-deep", INSPECT_JSON, 1, inspect_json(text=deep(200_000))),
    Case(
        "IM17-json-nan-score",
        INSPECT_JSON,
        2,
        inspect_json(text=json.dumps({**INSPECT_HEADER, "samples": [inspect_sample(0, float("nan"))]})),
    ),
    Case(
        "IM18-json-duplicate-ids",
        INSPECT_JSON,
        1,
        inspect_json({**INSPECT_HEADER, "samples": [*SAMPLES3, SAMPLES3[0]]}),
    ),
    Case("IM19-json-minimal-log", INSPECT_JSON, 0, inspect_json(), writes=True),
    Case(
        "IM20-json-started-no-samples", INSPECT_JSON, 1, inspect_json({**INSPECT_HEADER, "status": "started"})
    ),
    Case(
        "IM21-json-score-string",
        INSPECT_JSON,
        2,
        inspect_json({**INSPECT_HEADER, "samples": [inspect_sample(0, "maybe")]}),
    ),
    Case("IM22-log-is-fifo", INSPECT_JSON, 1, both(write("logs/x", ""), fifo("logs/log.json"))),
    # lm-evaluation-harness samples files
    Case("LM01-no-samples-file", LM_EVAL, 1, write(f"out/results_{LM_STAMP}.json", "{}")),
    Case(
        "LM02-misnamed-file",
        (*IMPORT, "lm-eval", "out/samples.jsonl"),
        1,
        write("out/samples.jsonl", json.dumps(LM3[0])),
    ),
    Case(
        "LM03-truncated-line",
        LM_EVAL,
        1,
        lm_samples(text=json.dumps(LM3[0]) + "\n" + json.dumps(LM3[1])[:20]),
    ),
    Case("LM04-empty-samples-file", LM_EVAL, 1, lm_samples(text="")),
    Case("LM05-line-is-a-list", LM_EVAL, 1, lm_samples([[0, 1]])),
    Case("LM06-no-doc-id", LM_EVAL, 1, lm_samples([{"acc": 1, "metrics": ["acc"]}])),
    Case("LM07-not-utf8", LM_EVAL, 1, lm_samples(text=b'{"doc_id": 0, "x": "\xff"}\n')),
    Case("LM08-metric-string", LM_EVAL, 2, lm_samples([lm_record(0, "yes")])),
    Case("LM09-unknown-metric", (*LM_EVAL, "--metric", "nope"), 2, lm_samples()),
    Case("LM10-no-metrics", LM_EVAL, 2, lm_samples([{"doc_id": 0, "filter": "none"}])),
    Case("LM11-metric-nan", LM_EVAL, 2, lm_samples(text=json.dumps(lm_record(0, float("nan"))) + "\n")),
    Case("LM12-doc-id-a-list", LM_EVAL, 1, lm_samples([lm_record([0])])),
    Case("LM13-results-config-text", LM_EVAL, 0, lm_samples(results='{"config": "x"}'), writes=True),
    Case("LM14-results-a-list", LM_EVAL, 0, lm_samples(results="[1, 2]"), writes=True),
    Case("LM15-metric-perplexity", LM_EVAL, 2, lm_samples([lm_record(0, 12.5), lm_record(1, 3.25)])),
    Case("LM16-minimal-samples", LM_EVAL, 0, lm_samples(), writes=True),
    Case("LM17-line-200k-deep", LM_EVAL, 1, lm_samples(text=deep(200_000) + "\n")),
    Case("LM18-filter-a-table", LM_EVAL, 1, lm_samples([lm_record(0, filter={"a": 1})])),
    Case("LM19-samples-is-fifo", LM_EVAL, 1, both(write("out/x", ""), fifo(LM_FILE))),
]


def resolve(folder: Path, token: str) -> str:
    """`{id:NAME}` in a case's argv: the id of run NAME in that case's store; `{prefix:NAME}` its start."""
    if token.startswith("{id:"):
        return _id_of(folder, token[4:-1])
    if token.startswith("{prefix:"):
        return _id_of(folder, token[8:-1])[:10]
    return token


PRELOAD = ("pyarrow", "pyarrow.parquet", "numpy", "poisson_prove.sweep", "poisson_prove.comparison")
# The import rows run in a driver of their own that has Inspect's reader loaded (~2 s to import:
# once there, not once a row), so the other rows' children do not carry it.
IMPORT_PRELOAD = ("pyarrow", "pyarrow.parquet", "inspect_ai.log")
pytestmark = pytest.mark.timeout(1200)  # the module's driver runs (every case) land in its first test


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The project every case copies: base.toml, its agents, and a store of runs a, b (paired
    with a), p (partial) and other (of another spec), made by the installed script once for the
    session (a worker that takes some of this module's tests reads the same folder)."""
    made = once_per_session(tmp_path_factory, "bad-inputs-prove-base", _make_base)
    return Path(made["folder"]), Path(made["home"])


def _make_base(root: Path) -> dict[str, str]:
    home = root / "home"
    folder = root / "base"
    home.mkdir()
    folder.mkdir()
    (folder / "base.toml").write_text(BASE)
    (folder / "agent.py").write_text(AGENT)
    (folder / "bad_agents.py").write_text(BAD_AGENTS)
    prove = script_path("poisson-prove")
    env = isolated_env(home)
    (folder / "other.toml").write_text(BASE.replace('"a", "b"]', '"a", "c"]'))
    other = (*P, "sweep", "other.toml", "--yes", "--max-mde", "1", "--replicates", "5", "--name", "other")
    for command in (
        other,
        (*SWEEP, "--name", "a"),
        (*SWEEP, "--name", "b", "--pair-with", "a"),
        (*SWEEP, "--name", "p", "--max-rollouts", "10"),
    ):
        done = subprocess.run(
            [prove, *command], cwd=folder, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode in (0, 3), done.stderr
    return {"folder": str(folder), "home": str(home)}


@pytest.fixture(scope="module")
def results(base: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every case's result, run once for the session (the table takes a minute and more)."""
    folder, home = base
    imports = [case for case in CASES if case.id.startswith(("IM", "LM"))]
    others = [case for case in CASES if case not in imports]
    entry = ("poisson_prove.cli:main", "poisson-prove", {})

    def make(work: Path) -> dict[str, dict[str, Any]]:
        return {
            **run_table(others, folder, work, home, *entry, PRELOAD, resolve),
            **run_table(imports, folder, work, home, *entry, IMPORT_PRELOAD, resolve),
        }

    made: dict[str, dict[str, Any]] = once_per_session(tmp_path_factory, "bad-inputs-prove-results", make)
    return made


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


# Each report's groups and their case counts; an id's letters before its number name its group.
GROUPS = {
    "reliability.md: spec files and targets": (("P",), 32),
    "reliability.md: rollout behaviour": (("R",), 28),
    "reliability.md: CLI flags and commands": (("C",), 34),
    "reliability.md: damaged run store": (("S",), 18),
    "reliability-2.md: spec TOML": (("SP", "BU", "EN"), 86),
    "reliability-2.md: rollouts that misbehave": (("RO",), 45),
    "reliability-2.md: CLI flags and run references": (("CL",), 35),
    "reliability-2.md: run names": (("NM",), 10),
    "reliability-2.md: damaged stores": (("SD",), 25),
    "reliability-2.md: Inspect AI / lm-eval logs": (("IM", "LM"), 41),
}


def group_of(case_id: str) -> str:
    prefix = re.match(r"[A-Z]+", case_id)
    assert prefix, case_id
    found = [name for name, (prefixes, _) in GROUPS.items() if prefix.group() in prefixes]
    assert len(found) == 1, case_id
    return found[0]


def test_every_group_holds_as_many_rows_as_its_report_counts() -> None:
    """Coverage stays measured: every case of both reports is a row, in its report's group."""
    counts = collections.Counter(group_of(case.id) for case in CASES)
    assert dict(counts) == {name: count for name, (_, count) in GROUPS.items()}
    numbers = [re.match(r"[A-Z]+\d+b?", case.id) for case in CASES]
    assert all(numbers) and len({n.group() for n in numbers if n}) == len(CASES)  # one row per report id


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
