"""Exporters: a failing one is warned not raised, global ones fire last, nothing lands outside the store."""

from __future__ import annotations

import os

import pytest

from proveai import FileExporter, iter_traces, regex_match, trace
from tests.proveai.store.store_kit import capture, plan


def test_nothing_is_written_outside_the_store_root(tmp_path):
    root = tmp_path / "store"
    outside_before = set(tmp_path.iterdir())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for _ in range(3):
            capture(root, checks=[regex_match("lookup", "found")])
        list(iter_traces(root))
    finally:
        os.chdir(cwd)
    assert set(tmp_path.iterdir()) - outside_before == {root}
    names = {p.name for p in root.iterdir()}
    assert not any(name.endswith(".tmp") for name in names)


def test_an_exporter_failure_is_recorded_and_warned_not_raised(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.warns(RuntimeWarning, match="exporter FileExporter failed"), trace(
        exporters=[FileExporter(blocker / "sub")]
    ) as t:
        plan("x")
    assert t.export_errors and "FileExporter" in t.export_errors[0]


def test_global_exporters_fire_after_the_trace_own(tmp_path):
    from proveai import add_exporter
    from proveai.capture.exporters import remove_exporter

    order: list[str] = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def export(self, t) -> None:
            order.append(self.name)

    global_one = Recorder("global")
    add_exporter(global_one)
    try:
        with trace(exporters=[Recorder("own1"), Recorder("own2")]):
            pass
    finally:
        remove_exporter(global_one)
    assert order == ["own1", "own2", "global"]
    with pytest.raises(TypeError, match="export"):
        add_exporter(object())
