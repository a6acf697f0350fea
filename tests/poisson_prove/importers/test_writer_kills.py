"""An import is crash-safe: `poisson-prove import` SIGKILLed at seeded instants leaves nothing
that blocks the next import, which then stores exactly what an uninterrupted import stores;
two imports of the same logs started together store one run."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CLI, isolated_env, script_path
from tests.poisson_prove.importers.pairs import stored_rows

#: What two imports of the same logs must agree on (not the run's id nor its moments).
ROW_COLUMNS = ("cell", "cfg", "replicate", "seed", "outcome", "t", "horizon", "case_id", "meta", "error_kind")
VOLATILE = {"run_id", "created", "created_ns", "finished"}


def _popen(prove: CLI, store: Path, args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [script_path("poisson-prove"), "--store", str(store), "import", *args],
        cwd=prove.cwd,
        env=isolated_env(prove.home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _manifests(store: Path) -> set[Path]:
    return set(store.glob("*/manifest.json"))


def _timeline(prove: CLI, store: Path, args: list[str]) -> tuple[float, float]:
    """An uninterrupted import into `store`: (when its run's manifest appeared, when it ended)."""
    started = time.monotonic()
    process = _popen(prove, store, args)
    appeared = None
    while process.poll() is None:
        if appeared is None and _manifests(store):
            appeared = time.monotonic() - started
        time.sleep(0.001)
    _, err = process.communicate()
    assert process.returncode == 0, err
    ended = time.monotonic() - started
    return appeared if appeared is not None else ended, ended


def _kill_at(prove: CLI, store: Path, args: list[str], anchor: str, delay: float) -> str:
    """Start an import, SIGKILL it `delay` s after `anchor` (its start, or the manifest of the
    run it makes appearing); where the kill landed, as far as the store tells."""
    before = _manifests(store)
    process = _popen(prove, store, args)
    started = time.monotonic()
    if anchor == "manifest":
        while process.poll() is None and not _manifests(store) - before:
            time.sleep(0.0005)
        started = time.monotonic()
    while process.poll() is None and time.monotonic() - started < delay:
        time.sleep(0.0005)
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.communicate()
    if process.returncode == 0:
        return "after the end"
    manifests = [json.loads(p.read_text()) for p in store.glob("*/manifest.json")]
    if not manifests:
        return "before the run"
    return "finished" if manifests[0].get("finished") else "run unfinished"


def _state(prove: CLI, store: Path) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    listed = subprocess.run(
        [script_path("poisson-prove"), "--store", str(store), "runs", "--json"],
        env=isolated_env(prove.home),
        capture_output=True,
        text=True,
        check=True,
    )
    (run,) = json.loads(listed.stdout)["runs"]
    folder = store / run["id"]
    manifest = json.loads((folder / "manifest.json").read_text())
    rows = sorted(tuple(r[c] for c in ROW_COLUMNS) for r in stored_rows(folder, ROW_COLUMNS))
    kept = {k: v for k, v in manifest.items() if k not in VOLATILE}
    kept["name"] = day_free_name(manifest)
    return kept, rows


def day_free_name(manifest: dict[str, Any]) -> str:
    """The run's name with the day it was made in (`<tool> <day> <letter>`) written `<day>`: a
    suite crossing midnight (UTC) imports the reference on one day and the killed one on the
    next, and the name must still show that the killed run's letter was taken back."""
    day = manifest["created"][:10]
    assert manifest["name"].split(" ")[1] == day, manifest["name"]
    return manifest["name"].replace(f" {day} ", " <day> ")


def _kills(prove: CLI, tmp_path: Path, args: list[str], points: int, seed: int) -> set[str]:
    reference = tmp_path / "reference"
    appeared, ended = _timeline(prove, reference, args)
    expected = _state(prove, reference)
    landed = set()
    rng = random.Random(seed)
    for point in range(points):
        store = tmp_path / f"killed-{point}"
        if point == 1:  # the moment the run's manifest appears: before its batch is written
            anchor, delay = "manifest", 0.0
        elif point % 2:  # inside the write: after the run's manifest appeared
            anchor, delay = "manifest", rng.uniform(0, max(ended - appeared, 0.01))
        else:
            anchor, delay = "start", rng.uniform(0, ended)
        where = _kill_at(prove, store, args, anchor, delay)
        landed.add(where)
        if point % 4 == 3:  # and the import after the kill killed too, once it made its run
            where = _kill_at(prove, store, args, "manifest", rng.uniform(0, 0.05))
        again = subprocess.run(
            [script_path("poisson-prove"), "--store", str(store), "import", *args],
            cwd=prove.cwd,
            env=isolated_env(prove.home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, (point, anchor, delay, again.stderr)
        assert again.stdout.startswith(("imported ", "already imported: ")), again.stdout
        replaced = "was an import of these logs stopped before it finished; it is replaced"
        assert (replaced in again.stderr) == (where == "run unfinished"), (where, again.stderr)
        assert _state(prove, store) == expected, (point, anchor, delay)
        assert not (store / ".import-removed").exists()
    return landed


def test_a_killed_lm_eval_import_never_blocks_the_next(
    prove: CLI, tmp_path: Path, lm_eval_outputs: dict[str, Path]
) -> None:
    landed = _kills(prove, tmp_path, ["lm-eval", str(lm_eval_outputs["before"])], points=8, seed=20261201)
    assert "run unfinished" in landed  # the kills after the manifest land inside the write


def test_a_killed_inspect_import_never_blocks_the_next(
    prove: CLI, tmp_path: Path, inspect_logs: dict[str, Path]
) -> None:
    landed = _kills(prove, tmp_path, ["inspect", str(inspect_logs["after"])], points=4, seed=7)
    assert "run unfinished" in landed


@pytest.mark.parametrize("tool", ["lm-eval", "inspect"])
def test_two_imports_of_the_same_logs_at_once_store_one_run(
    prove: CLI,
    tmp_path: Path,
    tool: str,
    lm_eval_outputs: dict[str, Path],
    inspect_logs: dict[str, Path],
) -> None:
    log = lm_eval_outputs["before"] if tool == "lm-eval" else inspect_logs["after"]
    store = tmp_path / "store"
    processes = [_popen(prove, store, [tool, str(log), "--json"]) for _ in range(2)]
    documents = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        documents.append(json.loads(out))
    assert sorted(d["created"] for d in documents) == [False, True]
    assert documents[0]["run_id"] == documents[1]["run_id"]
    assert len([p for p in store.iterdir() if p.is_dir()]) == 1
