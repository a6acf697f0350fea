"""Capture processes killed for real (SIGKILL) at seeded instants while they write traces into
one store: afterwards, and after the documented way on (the next capture, whose first write
clears what dead writers left once it is older than a live writer's could be), the store is what
captures that were never killed leave: every trace a process reported is indexed, the index
names only traces whose files are whole, and no temporary file is left."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from prove_common.files import STALE_AFTER_S
from proveai.store.traces.index import read_index
from tests.conftest import isolated_env

WRITER = """
import sys
from proveai import FileExporter, monitor, trace

@monitor("draft", model="gpt-4o-mini")
def draft(i):
    return "line of a long answer " * 20000 + str(i)  # a trace file big enough to be caught mid-write

store = sys.argv[1]
for n in range(int(sys.argv[2])):
    with trace("kills", exporters=[FileExporter(store)]) as t:
        draft(n)
    print(t.trace_id, flush=True)
"""

WRITERS = 6
TRACES_EACH = 40


def _age_temps(store: Path) -> list[Path]:
    """The temporary files left, dated as they are once a live writer's could no longer be."""
    temps = [p for p in store.iterdir() if p.name.endswith(".tmp")]
    for path in temps:
        past = path.stat().st_mtime - STALE_AFTER_S - 5
        os.utime(path, (past, past))
    return temps


def test_captures_killed_at_seeded_instants_lose_nothing_and_leave_no_temporary_file(
    tmp_path: Path, home: Path
) -> None:
    store = tmp_path / "store"
    chooser = random.Random(20261201)
    env = isolated_env(home)
    reported: list[str] = []
    killed = 0
    for _ in range(WRITERS):
        after = chooser.randint(1, TRACES_EACH - 5)  # the kill lands after this many reports
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store), str(TRACES_EACH)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert child.stdout is not None
        for _ in range(after):
            line = child.stdout.readline().strip()
            if not line:
                break
            reported.append(line)
        time.sleep(chooser.uniform(0, 0.03))  # where in the next trace's write the kill lands
        child.send_signal(signal.SIGKILL)
        rest, _ = child.communicate(timeout=60)
        reported += rest.split()  # reported between the last read and the kill
        killed += child.returncode == -signal.SIGKILL
    assert killed >= WRITERS - 1, "the writers finished before they were killed"

    _age_temps(store)
    # the way on: the next capture into the store
    follow = subprocess.run(
        [sys.executable, "-c", WRITER, str(store), "1"], env=env, capture_output=True, text=True, timeout=120
    )
    assert follow.returncode == 0, follow.stderr
    reported += follow.stdout.split()

    assert not [p.name for p in store.iterdir() if p.name.endswith(".tmp")]
    index = read_index(store)
    assert index.warnings == []
    assert set(reported) <= set(index.entries)  # nothing reported was lost
    for trace_id in index.entries:  # and nothing indexed is torn
        with open(store / f"{trace_id}.json", encoding="utf-8") as handle:
            assert json.load(handle)["resourceSpans"], trace_id
