"""Prove: did a change to an LLM agent really change how often it fails?

The public names, listed in `__all__`. Each lives in its own module and is imported on first
use (`prove_common.lazy`), so that `import poisson_prove` (and every `--help`) stays instant;
type checkers see the explicit imports below, and tests/poisson_prove/test_public_api.py holds
that the list, the imports and the map name the same things.

`poisson_prove.compare` is the function, whatever was imported first (no module shares its
name); `default_runs` and the result types live in the package `poisson_prove.comparison`.

Layers, lowest first, each a package (a folder named for its concept; its own docstring
lists its rooms). A module imports only from its own package and from lower layers, never
sideways within its layer (tests/poisson_prove/test_layers.py holds this, for imports at the
top of a module, inside functions and under TYPE_CHECKING alike); below them all stands
`prove_common`, the CLI/IO kit both packages use; this file, the public map, sits above them
all and nothing imports it.

0. errors, version: the one error type and the exit codes; the version
1. stats: the statistics (power, incidence, tests, sequential looks)
2. episode: one episode (the contract, recording, its row, running one, capture, isolation)
3. chaos: HTTP faults injected into an episode's calls
4. backends: the executors that run episodes (local, pool, Dask, Ray, Modal, Burla)
5. design, store: the design of a sweep (spec, conditions, seeding, plan); the run store
6. sweep, comparison, inspection, importers: running a sweep; comparing two runs and the CI
   gate; reading one run; importing Inspect AI and lm-eval logs
7. render, dashboard: text and JSON; the HTML dashboard
8. cli, examples: the command line; the example agent
9. __main__: `python -m poisson_prove`
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poisson_prove.episode.model import Episode
from poisson_prove.errors import ProveError
from prove_common.lazy import lazy_exports

if TYPE_CHECKING:
    from poisson_prove.comparison import Comparison, ConditionResult, Headline, OutcomeResult, compare
    from poisson_prove.episode.recording import record, step
    from poisson_prove.store.info import RunInfo
    from poisson_prove.store.runs import RunStore, load_run
    from poisson_prove.sweep import SweepResult, run_sweep
    from poisson_prove.version import __version__

__all__ = [
    "Comparison",
    "ConditionResult",
    "Episode",
    "Headline",
    "OutcomeResult",
    "ProveError",
    "RunInfo",
    "RunStore",
    "SweepResult",
    "__version__",
    "compare",
    "load_run",
    "record",
    "run_sweep",
    "step",
]

# public name -> "module:attribute", imported on first use (prove_common.lazy)
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "__version__": "poisson_prove.version:__version__",
        "record": "poisson_prove.episode.recording:record",
        "step": "poisson_prove.episode.recording:step",
        "run_sweep": "poisson_prove.sweep:run_sweep",
        "SweepResult": "poisson_prove.sweep:SweepResult",
        "compare": "poisson_prove.comparison:compare",
        "Comparison": "poisson_prove.comparison:Comparison",
        "ConditionResult": "poisson_prove.comparison:ConditionResult",
        "OutcomeResult": "poisson_prove.comparison:OutcomeResult",
        "Headline": "poisson_prove.comparison:Headline",
        "load_run": "poisson_prove.store.runs:load_run",
        "RunStore": "poisson_prove.store.runs:RunStore",
        "RunInfo": "poisson_prove.store.info:RunInfo",
    },
)
