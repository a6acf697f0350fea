"""Compaction of a finished run's batch files (store.compaction): the same rows and columns, read
back by independent readers; a SIGKILL at every instant of it never counts a row twice or loses
one; the next writer removes what a kill left; whatever columns the batches hold are kept."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from poisson_prove.store import compaction
from poisson_prove.store.checks import stored_keys
from poisson_prove.store.info import COMPACTED_SUFFIX, REPLACES_KEY
from poisson_prove.store.runs import RunStore
from tests.conftest import CLI, isolated_env, script_path
from tests.poisson_prove.helpers import small_spec, write

# The process kills itself with SIGKILL at the instant COMPACTION_KILL_AT names, counted on the
# file operations compaction makes (no hook in the library): `before-rename` (the compacted
# file written whole under its temporary name), `after-rename`, `after-unlink:N` (N replaced
# batches removed) and `before-manifest` (compaction done, the manifest not yet complete).
KILLER = """
import os, signal

_AT = os.environ.get("COMPACTION_KILL_AT", "")
_KIND, _, _NTH = _AT.partition(":")
_REPLACE, _UNLINK = os.replace, os.unlink
_UNLINKED = [0]
_MINE = []  # the compacted file this process renamed in (a forked supervisor renames none)


def _die():
    os.kill(os.getpid(), signal.SIGKILL)


def _replace(src, dst, *args, **kwargs):
    target = os.fspath(dst)
    compacted = target.endswith("-compacted.parquet")
    if _KIND == "before-rename" and compacted:
        _die()
    if _KIND == "before-manifest" and target.endswith("manifest.json") and _MINE:
        _die()
    _REPLACE(src, dst, *args, **kwargs)
    if compacted:
        _MINE.append(target)
        if _KIND == "after-rename":
            _die()


def _unlink(path, *args, **kwargs):
    _UNLINK(path, *args, **kwargs)
    name = os.path.basename(os.fspath(path))
    if _KIND == "after-unlink" and _MINE and name.startswith("batch-") and name.endswith(".parquet"):
        _UNLINKED[0] += 1
        if _UNLINKED[0] == int(_NTH):
            _die()


if _AT:
    os.replace, os.unlink = _replace, _unlink
"""

AGENT = (
    KILLER
    + """
import random
from poisson_prove import Episode, step


def rollout(cfg, seed):
    rng = random.Random(seed)
    with step("plan", x=cfg["x"]):
        pass
    if seed % 11 == 0:
        raise RuntimeError("tool down")
    return Episode("bad" if rng.random() < 0.3 else "ok", rng.randint(1, 5), 5, {"case_id": cfg["x"]})
"""
)

REPLICATES = 150  # 2 conditions: 300 episodes
BATCH = "20"  # 15 batch files
# What two runs on one salt share (the spans and started_at hold each run's own clock times).
VALUES = ("cell", "replicate", "seed", "outcome", "t", "horizon", "case_id", "error_kind", "error_message")


def _sweep(workdir: Path, home: Path, *args: str, kill_at: str = "") -> subprocess.CompletedProcess[str]:
    design = [] if "--resume" in args else ["--max-mde", "1", "--batch-size", BATCH]
    return subprocess.run(
        [script_path("poisson-prove"), "sweep", "--yes", *design, *args],
        cwd=workdir,
        env=isolated_env(home, {"COMPACTION_KILL_AT": kill_at} if kill_at else None),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store with "ref", a complete (compacted) run, and "partial", the same design on the same
    salt stopped 10 short of its 300 episodes, so its 15 batch files are kept as written."""
    root = tmp_path_factory.mktemp("compaction")
    work, home = root / "work", root / "home"
    work.mkdir()
    home.mkdir()
    write(work, "agent.py", AGENT)
    small_spec(work, replicates=REPLICATES)
    assert _sweep(work, home, "--name", "ref").returncode == 0
    stopped = _sweep(work, home, "--name", "partial", "--pair-with", "ref", "--max-rollouts", "290")
    assert stopped.returncode == 3, stopped.stderr
    store = RunStore(work / "prove-runs")
    runs = {info.name: info for info in store.runs()}
    return {"work": work, "home": home, "store": store.root, "ref": runs["ref"], "partial": runs["partial"]}


def _duckdb(folder: Path, columns: tuple[str, ...] = VALUES) -> list[tuple[Any, ...]]:
    """The rows of one run's episode files with DuckDB (an independent reader), sorted."""
    files = f"{folder}/episodes/*.parquet"
    query = f"select {', '.join(columns)} from read_parquet('{files}') order by cell, replicate"
    return duckdb.connect().execute(query).fetchall()


def _copy_run(info_path: Path, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    copied = into / info_path.name
    shutil.copytree(info_path, copied, ignore=shutil.ignore_patterns(".writer.lock"))
    return copied


def test_a_complete_sweep_is_one_compacted_file_of_the_same_rows(swept: dict[str, Any]) -> None:
    ref, partial = swept["ref"], swept["partial"]
    (only,) = sorted(ref.episodes_dir.iterdir())  # no temporary file, no batch left
    assert only.name.endswith(COMPACTED_SUFFIX)
    events = [e for e in ref.events() if e["event"] == "compact"]
    assert [(e["file"], e["rows"]) for e in events] == [(only.name, 300)]
    assert len(events[0]["replaces"]) >= 15  # batches of at most 20 rows
    assert ref.unlisted_batches() == []
    metadata = pq.read_metadata(only)
    assert metadata.num_rows == 300 and metadata.row_group(0).num_rows == 300  # one row group here
    assert sorted(json.loads(metadata.metadata[REPLACES_KEY.encode()])) == sorted(events[0]["replaces"])
    # The same salt: the partial run's 290 rows are the reference's, value for value.
    kept = {row[:2]: row for row in _duckdb(partial.path)}
    assert len(kept) == 290 and all(kept[row[:2]] == row for row in _duckdb(ref.path) if row[:2] in kept)
    assert len(list(partial.episodes_dir.glob("*.parquet"))) >= 15  # a partial run is not compacted


def test_compaction_keeps_every_value_column_and_type(
    swept: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The partial run's batches (at most 20 rows each) compacted in a copy, with row groups of 64
    rows and files of at most 128 rows: the same table by pyarrow.dataset (in write order), DuckDB
    and polars."""
    import polars as pl

    monkeypatch.setattr(compaction, "COMPACT_ROW_GROUP", 64)
    monkeypatch.setattr(compaction, "COMPACT_MAX_ROWS", 128)
    original = swept["partial"].path
    copied = _copy_run(original, tmp_path / "store")
    (info,) = RunStore(tmp_path / "store").runs()
    writer = RunStore(tmp_path / "store").open_run(info, hold=True)
    done = writer.compact()
    writer.release()
    batches = sorted(original.glob("episodes/*.parquet"))
    assert done.skipped is None and done.replaced == len(batches)
    files = info.batch_files()
    assert files == sorted(copied.glob("episodes/*.parquet")) and len(files) >= 3
    assert all(path.name.endswith(COMPACTED_SUFFIX) for path in files)
    sizes = [pq.read_metadata(path).num_rows for path in files]
    assert sum(sizes) == 290 and all(108 < size <= 128 for size in sizes[:-1]), sizes  # whole batches
    first = pq.read_metadata(files[0])
    groups = [first.row_group(i).num_rows for i in range(first.num_row_groups)]
    assert groups == [64, sizes[0] - 64], groups
    before = ds.dataset(original / "episodes", format="parquet").to_table()
    after = ds.dataset(copied / "episodes", format="parquet").to_table()
    assert after.schema.equals(before.schema) and after.equals(before)  # every column, in write order
    assert _duckdb(copied, ("*",)) == _duckdb(original, ("*",))
    frame = pl.read_parquet(f"{copied}/episodes/*.parquet")
    assert frame.equals(pl.read_parquet(f"{original}/episodes/*.parquet"))
    metadata = pq.read_schema(files[0]).metadata
    assert metadata[b"poisson_prove.run_id"].decode() == info.run_id  # the batches' own metadata
    assert stored_keys(info) == stored_keys(swept["partial"])
    # Compacted again (its files and a batch written since): one file, naming all it holds.
    monkeypatch.setattr(compaction, "COMPACT_MAX_ROWS", 1 << 21)
    writer = RunStore(tmp_path / "store").open_run(info, hold=True)
    assert writer.compact().replaced == len(files)
    writer.release()
    (last,) = info.batch_files()
    named = set(json.loads(pq.read_metadata(last).metadata[REPLACES_KEY.encode()]))
    assert {p.name for p in batches} | {f.name for f in files} == named
    assert ds.dataset(copied / "episodes", format="parquet").to_table().equals(before)


def test_whatever_columns_the_batches_hold_are_copied(tmp_path: Path) -> None:
    """Schema-agnostic: batches with a column the store does not know yet keep it, with its type;
    batches whose columns differ are left as they are."""
    store = RunStore(tmp_path / "store")
    writer = store.create_run(target_id="t", name="extra", manifest={})
    folder = writer.info.episodes_dir
    for seq, rows in enumerate((3, 4, 5), start=1):
        table = pa.table(
            {
                "run_id": [writer.info.run_id] * rows,
                "cell": [f"c{i % 2}" for i in range(rows)],
                "replicate": pa.array(range(seq * 10, seq * 10 + rows), pa.int32()),
                "agent_calls": pa.array([i * seq for i in range(rows)], pa.int16()),
            }
        )
        pq.write_table(table, folder / f"batch-{seq:06d}-abcde{seq}.parquet")
    before = ds.dataset(folder, format="parquet").to_table()
    assert writer.compact().replaced == 3
    (only,) = folder.glob("*.parquet")
    assert pq.read_table(only).equals(before) and pq.read_schema(only).field("agent_calls").type == pa.int16()
    # Another batch without the new column: the columns differ, nothing is rewritten.
    pq.write_table(before.drop_columns(["agent_calls"]).slice(0, 2), folder / "batch-000009-abcdef.parquet")
    names = sorted(p.name for p in folder.iterdir())
    done = writer.compact()
    assert done.skipped == "the batches' columns differ" and sorted(p.name for p in folder.iterdir()) == names
    writer.release()


DRIVER = KILLER + textwrap.dedent("""
    import sys
    from poisson_prove.store.runs import RunStore

    store = RunStore(sys.argv[1])
    (info,) = store.runs()
    writer = store.open_run(info, hold=True)
    writer.compact()
    print("not killed")
    """)


def test_a_kill_at_every_instant_of_compaction_keeps_each_row_once(
    swept: dict[str, Any], tmp_path: Path
) -> None:
    """SIGKILL at each instant (a fresh process per instant, the compaction of the partial run's
    batches): the run reads exactly its rows, the leftovers are out of every listing, and the next
    writer removes them and compacts."""
    original = swept["partial"]
    rows = _duckdb(original.path)
    keys = stored_keys(original)
    batches = len(list(original.episodes_dir.glob("*.parquet")))
    instants = ["before-rename", "after-rename", "after-unlink:1", "after-unlink:8"]
    instants.append(f"after-unlink:{batches - 1}")  # one replaced batch left
    for instant in instants:
        root = tmp_path / instant.replace(":", "-")
        _copy_run(original.path, root)
        killed = subprocess.run(
            [sys.executable, "-c", DRIVER, str(root)],
            env={**os.environ, "COMPACTION_KILL_AT": instant},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert killed.returncode == -9, (instant, killed.stdout, killed.stderr)
        (info,) = RunStore(root).runs()
        left = sorted(p.name for p in info.episodes_dir.iterdir())
        temporary = [name for name in left if name.endswith(".tmp")]
        compacted = [name for name in left if name.endswith(COMPACTED_SUFFIX)]
        assert (temporary, len(compacted)) == (([left[0]], 0) if instant == "before-rename" else ([], 1))
        listed = info.batch_files()
        assert len(listed) == (batches if instant == "before-rename" else 1), instant
        assert stored_keys(info) == keys, instant  # no duplicate refused, none lost
        table = info.read_episodes(list(VALUES))
        assert table.num_rows == 290 and sorted(zip(*table.to_pydict().values(), strict=True)) == rows, (
            instant
        )
        writer = RunStore(root).open_run(info, hold=True)  # the next writer clears what is left
        done = writer.compact()
        writer.release()
        assert done.replaced == (batches if instant == "before-rename" else 0), instant
        (only,) = sorted(p.name for p in info.episodes_dir.iterdir() if not p.name.startswith("."))
        assert only.endswith(COMPACTED_SUFFIX) and _duckdb(info.path) == rows, instant


def test_a_killed_sweep_reads_as_an_uninterrupted_one_and_resumes(swept: dict[str, Any]) -> None:
    """The real `poisson-prove sweep`, killed at seeded instants of its final compaction: diff and
    inspect count exactly the uninterrupted run's rows, and `--resume` completes it as one file."""
    work, home, ref = swept["work"], swept["home"], swept["ref"]
    seed = random.randrange(2**32)
    instants = random.Random(seed).sample(
        ["before-rename", "after-rename", "after-unlink:1", "after-unlink:7", "before-manifest"], 2
    )
    prove = CLI("poisson-prove", work, home)
    reference = json.loads(prove("inspect", "ref", "--json").stdout)["run"]
    for number, instant in enumerate(instants):
        name = f"killed-{number}"
        killed = _sweep(work, home, "--name", name, "--pair-with", "ref", kill_at=instant)
        # The command's supervisor outlives its sweep process, and says how it ended (exit 3).
        assert killed.returncode == 3 and "ended by SIGKILL" in killed.stderr, (instant, seed, killed.stderr)
        # every episode was stored: said so, and the way on is a plain resume (no episode is lost
        # to a process that ended, so no --episode-timeout advice)
        assert (
            "after every episode was stored, as it finished the run: all 300 rollouts are kept in run "
            f'"{name}", which is not marked complete yet' in killed.stderr
        ), (instant, seed, killed.stderr)
        assert "sweep" in killed.stderr.splitlines()[-1] and "--resume" in killed.stderr.splitlines()[-1]
        assert "--episode-timeout" not in killed.stderr, (instant, seed, killed.stderr)
        info = RunStore(swept["store"]).resolve(name)
        assert info.status == "partial", (instant, seed)
        compared = prove("diff", "ref", name, "--json")
        assert compared.returncode in (0, 1), (instant, seed, compared.stderr)
        for condition in json.loads(compared.stdout)["conditions"]:
            for outcome in condition["outcomes"]:
                assert outcome["before"]["n"] == outcome["after"]["n"] > 100, (instant, seed)
                assert outcome["before"]["k"] == outcome["after"]["k"], (instant, seed)
        inspected = prove("inspect", name, "--json")
        assert inspected.returncode == 0, (instant, seed, inspected.stderr)
        counted = [reference, json.loads(inspected.stdout)["run"]]
        assert counted[1]["episodes"] == counted[0]["episodes"] == 300, (instant, seed)
        for key in ("outcomes", "without_outcome"):
            assert counted[1][key] == counted[0][key], (instant, seed)
        resumed = _sweep(work, home, "--resume", name)
        assert resumed.returncode == 0, (instant, seed, resumed.stderr)
        info = RunStore(swept["store"]).resolve(name)
        assert info.status == "complete" and info.manifest["counts"]["done"] == 300, (instant, seed)
        (only,) = sorted(p.name for p in info.episodes_dir.iterdir())
        assert only.endswith(COMPACTED_SUFFIX), (instant, seed)
        assert _duckdb(info.path) == _duckdb(ref.path), (instant, seed)


def test_a_read_listed_before_a_compaction_lists_the_files_again(
    swept: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that listed the batches just before the sweep compacted them finds one gone: it
    lists them again and reads the compacted file (a file gone for good is one clear error)."""
    from poisson_prove.store.columns import read_columns
    from poisson_prove.store.info import BatchesChanged, RunInfo

    original = swept["partial"]
    _copy_run(original.path, tmp_path / "store")
    (info,) = RunStore(tmp_path / "store").runs()
    stale = info.batch_files()  # the batches, as listed before the compaction
    writer = RunStore(tmp_path / "store").open_run(info, hold=True)
    assert writer.compact().replaced == len(stale)
    writer.release()
    listed = RunInfo.batch_files
    calls: list[int] = []

    def listing(self: RunInfo, stale_for: int = 1) -> list[Path]:
        calls.append(1)
        return stale if len(calls) <= stale_for else listed(self)

    monkeypatch.setattr(RunInfo, "batch_files", listing)
    columns = ("cell", "replicate", "outcome")
    assert read_columns(info, columns).num_rows == 290 and len(calls) == 2
    calls.clear()
    expected = sorted(zip(*info.read_episodes(list(VALUES)).to_pydict().values(), strict=True))
    assert expected == _duckdb(original.path) and len(calls) == 2
    monkeypatch.setattr(RunInfo, "batch_files", lambda self: listing(self, stale_for=99))
    with pytest.raises(BatchesChanged, match="was removed while the run was read"):
        read_columns(info, columns)


def test_ctrl_c_while_the_replaced_batches_are_removed_removes_them_all(
    swept: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A complete run gets no next writer: a Ctrl-C after the rename still leaves no replaced
    batch behind for a reader of the bare glob."""
    _copy_run(swept["partial"].path, tmp_path / "store")
    (info,) = RunStore(tmp_path / "store").runs()
    real = os.unlink
    calls: list[str] = []

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(os.fspath(path))
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(path, *args, **kwargs)

    writer = RunStore(tmp_path / "store").open_run(info, hold=True)
    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(KeyboardInterrupt):
        writer.compact()
    monkeypatch.undo()
    writer.release()
    (only,) = info.episodes_dir.glob("*.parquet")
    assert only.name.endswith(COMPACTED_SUFFIX) and _duckdb(info.path) == _duckdb(swept["partial"].path)
