"""An instrumentor that loads but raises in instrument() (as openai-v2 2.3b0 does against wrapt
2.5) is named on the plan, the done line and in the manifest; the sweep runs on without it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.poisson_prove.helpers import SEEDED_TARGET, small_spec, write

BROKEN = """
class BrokenInstrumentor:
    is_instrumented_by_opentelemetry = False

    def instrumentation_dependencies(self):
        return []

    def instrument(self, **kwargs):
        raise TypeError("wrap_function_wrapper() got an unexpected keyword argument 'module'")
"""


def test_an_instrumentor_failing_to_instrument_is_named(prove: Any, workdir: Path) -> None:
    plugins = workdir / "plugins"
    dist = plugins / "broken_instrumentor-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-instrumentor\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[opentelemetry_instrumentor]\nbroken = broken_instrumentor:BrokenInstrumentor\n"
    )
    write(plugins, "broken_instrumentor.py", BROKEN)
    write(workdir, "agent.py", SEEDED_TARGET)
    capture = '[capture]\ninstrument = ["requests", "broken"]\nmax_observation_bytes = 256\n'
    small_spec(workdir, replicates=20, values=["a"], extra=capture)
    path = os.pathsep.join(p for p in (str(plugins), os.environ.get("PYTHONPATH", "")) if p)
    result = prove("sweep", "--yes", "--max-mde", "0.5", env={"PYTHONPATH": path})
    assert result.returncode == 0, result.stderr
    assert "capture requests, broken (failed to instrument: no spans); content left out" in result.stdout
    assert (
        "capture without spans from broken (failed to instrument: TypeError: wrap_function_wrapper() "
        "got an unexpected keyword argument 'module')"
    ) in result.stdout.splitlines()
    (manifest_path,) = (workdir / "prove-runs").glob("*/manifest.json")
    missing = json.loads(manifest_path.read_text())["capture"]["missing"]
    assert list(missing) == ["broken"]
    assert missing["broken"].startswith("failed to instrument: TypeError")
