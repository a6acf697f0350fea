"""The documented Python names mean one thing whatever was imported first: each order is tried
in a fresh interpreter against runs the installed script made. `__all__` is the package's
public members, and the `TYPE_CHECKING` imports type checkers read and the lazy map
(prove_common.lazy) the interpreter reads name the same object for each."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.poisson_prove.helpers import SEEDED_TARGET, small_spec, write
from tests.public_api_kit import SRC, declared, public_members

PACKAGES = ["poisson_prove", "poisson_prove.comparison"]


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_the_public_members(package: str, tmp_path: Path) -> None:
    assert sorted(importlib.import_module(package).__all__) == public_members(package, tmp_path)


@pytest.mark.parametrize("package", PACKAGES)
def test_type_checkers_and_the_interpreter_read_the_same_names(package: str) -> None:
    typed, lazy, own = declared(SRC / package.replace(".", "/") / "__init__.py")
    assert typed == lazy  # each name imported for type checkers is the one served at run time
    module = importlib.import_module(package)
    assert sorted([*lazy, *own]) == sorted(module.__all__)
    for name, where in lazy.items():
        source, _, attribute = where.partition(":")
        assert getattr(module, name) is getattr(importlib.import_module(source), attribute), name

FIRST = {
    "package": "import poisson_prove",
    "comparison": "import poisson_prove.comparison",
    "from-comparison": "from poisson_prove.comparison import compare, default_runs",
    "submodule": "import poisson_prove.comparison.compare_runs",
    "function-first": "import poisson_prove; poisson_prove.compare",
    "star": "from poisson_prove import *",
}

CHECK = """
import importlib.util, json, sys
{first}
import poisson_prove
from poisson_prove import __all__ as names
from poisson_prove import (Comparison, ConditionResult, Episode, Headline, OutcomeResult,
    ProveError, RunInfo, RunStore, SweepResult, compare, load_run, record, run_sweep, step)
import poisson_prove.comparison.result, poisson_prove.inspection.run
missing = [n for n in names if not hasattr(poisson_prove, n)]
before, after = poisson_prove.comparison.default_runs(store="prove-runs")
result = poisson_prove.compare("a", "b", store="prove-runs")
print(json.dumps({
    "missing": missing,
    "same": poisson_prove.compare is poisson_prove.comparison.compare is compare,
    "function": type(compare).__name__,
    "no_module_named_compare": importlib.util.find_spec("poisson_prove.compare") is None,
    "runs": [before.name, after.name],
    "type": type(result).__name__,
    "is_comparison": isinstance(result, Comparison),
    "word": result.headline.word,
    "rows": load_run("a", store="prove-runs").num_rows,
    "inspect": callable(poisson_prove.inspection.run.inspect_run),
}))
"""


@pytest.mark.parametrize("first", list(FIRST))
def test_every_documented_name_imports_in_any_order(prove, workdir, home, first) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20)
    assert prove("sweep", "--yes", "--max-mde", "1", "--name", "a").returncode == 0
    assert prove("sweep", "--yes", "--max-mde", "1", "--name", "b", "--pair-with", "a").returncode == 0
    result = subprocess.run(
        [sys.executable, "-c", CHECK.replace("{first}", FIRST[first])],
        cwd=workdir,
        env=isolated_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    assert facts == {
        "missing": [],
        "same": True,
        "function": "function",
        "no_module_named_compare": True,
        "runs": ["a", "b"],
        "type": "Comparison",
        "is_comparison": True,
        "word": "no change",  # the same rollout, the same seeds
        "rows": 40,
        "inspect": True,
    }
