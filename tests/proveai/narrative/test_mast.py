"""The MAST narratives of a detection the real engine wrote: one trace (render) and a cohort."""

from __future__ import annotations

import json

from proveai.narrative.mast import narrate_cohort
from proveai.narrative.mast import render as render_detection
from tests.proveai.engine import pipelines
from tests.proveai.engine.engine_kit import client, engine_fixture, engines_fixture  # noqa: F401  (fixtures)


def test_the_stored_engine_detection_is_narrated_by_the_mast_renderer(engine):
    t = pipelines.run("loop", seed=8)
    client(engine.url).analyze(t)
    stored = json.loads((engine.store / f"{t.trace_id}.detection.json").read_text())
    lines = render_detection(stored).splitlines()
    assert lines[0] == f"Trace {t.trace_id[:12]}… is flagged: at least one check failed."
    assert lines[1].startswith("- checks on synthesizer failed: check regex_match failed: synthesizer output")
    assert lines[2].startswith("- loops on researcher failed: ran 6 times; the limit without a baseline")
    assert narrate_cohort([stored]).splitlines()[0] == "1 trace(s): 1 flagged."
