"""Where episodes run. Every backend implements `Executor` (backends/base.py).

`make_executor` is the one place that maps a backend name and its settings to an executor;
`estimate_cost` gives the plan's cost line. Each backend's module is imported only when a sweep
chooses it (a local sweep loads neither Dask's, Ray's, Modal's nor Burla's adapter, and
`BACKENDS` names all five without importing any), their optional SDKs only when the executor is
built, and a missing extra is a ProveError (exit 1) naming the `pip install` line.

The settings dict is the spec's validated table for the chosen backend ([local], [dask],
[ray], [modal], [burla]) merged with the command line's overrides, under these keys:

| key            | backends                  | meaning                                          |
| -------------- | ------------------------- | ------------------------------------------------ |
| concurrency    | all                       | episodes (containers) at once                    |
| mode           | local                     | "auto", "threads", "async" or "processes"        |
| infra_errors   | all                       | exception type names retried as infrastructure   |
| infra_retries  | all                       | retries per episode of those errors (default 3)  |
| infra_backoff  | all                       | seconds before the first retry (default 1, x2)   |
| worker_retries | dask, ray, modal, burla   | resubmissions of an episode whose worker died    |
| address        | dask, ray                 | an existing scheduler / cluster                  |
| n_workers, threads_per_worker | dask       | the LocalCluster started when no address         |
| tls_ca_file, tls_client_cert, tls_client_key, require_encryption | dask | Security |
| upload, env    | dask                      | ship the spec's folder; set these variables      |
| client         | dask (Python only)        | a Client or cluster object handed over           |
| num_cpus       | ray                       | the local instance's logical CPUs                |
| app_name, image, cpu, memory, gpu, timeout | modal | the app, the [modal.SECTION] image, resources |
| cpu, memory, gpu, image | burla            | func_cpu, func_ram (GB), func_gpu, image         |
| est_seconds, max_cost | modal, burla       | the estimate (the sweep compares max_cost)       |

docs/backends.md is the user's version of this table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from poisson_prove.backends._extras import require
from poisson_prove.backends.pricing import estimate_usd
from poisson_prove.errors import ProveError
from prove_common.lazy import lazy_exports
from prove_common.suggest import did_you_mean

if TYPE_CHECKING:
    from poisson_prove.backends.base import Executor
    from poisson_prove.episode.run import Job, Task

BACKENDS = ("local", "modal", "burla", "dask", "ray")

__all__ = [
    "BACKENDS",
    "Executor",
    "Job",
    "Task",
    "check_backend",
    "estimate_cost",
    "make_executor",
    "needs_pool",
]

# The interface and the job's types on first use: `BACKENDS` and `estimate_cost` (the --help,
# the plan) import no executor, and so neither episode.run nor asyncio.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Executor": "poisson_prove.backends.base:Executor",
        "Job": "poisson_prove.episode.run:Job",
        "Task": "poisson_prove.episode.run:Task",
    },
)


def needs_pool(settings: Mapping[str, Any]) -> bool:
    """True when the local settings ask for more than one-after-another episodes."""
    concurrency = settings.get("concurrency")
    return bool(
        (isinstance(concurrency, int) and concurrency > 1)
        or (settings.get("mode") not in (None, "auto"))
        or settings.get("infra_errors")
    )


def make_executor(backend: str, settings: Mapping[str, Any]) -> Executor:
    """The executor for `backend`, configured by its spec table merged with CLI overrides.

    local: the sequential LocalExecutor (through DefaultLocalExecutor, which sends an
    `async def` rollout to a one-slot pool) unless concurrency > 1, an explicit mode or named
    infra_errors ask for the pool (backends/pool.py). dask, ray, modal, burla: their adapters,
    each importing its SDK when built (never at import: the backend modules load without their
    extras) so a missing extra is refused before anything runs.
    Settings errors and missing extras raise ProveError with exit code 1.
    """
    # Each backend's module only when chosen: the others' adapters (and what they import) are
    # not loaded by a sweep that does not use them.
    if backend == "local":
        from poisson_prove.backends.pool import DefaultLocalExecutor, PoolExecutor  # only when chosen

        return PoolExecutor(settings) if needs_pool(settings) else DefaultLocalExecutor(settings)
    if backend == "dask":
        from poisson_prove.backends.dask import DaskExecutor  # only when chosen

        return DaskExecutor(settings)
    if backend == "ray":
        from poisson_prove.backends.ray import RayExecutor  # only when chosen

        return RayExecutor(settings)
    if backend == "modal":
        from poisson_prove.backends.modal import ModalExecutor  # only when chosen

        return ModalExecutor(settings)
    if backend == "burla":
        from poisson_prove.backends.burla import BurlaExecutor  # only when chosen

        return BurlaExecutor(settings)
    raise ProveError(
        f"--backend {backend} is not a backend{did_you_mean(backend, BACKENDS)}",
        suggestions=[f"the backends are: {', '.join(BACKENDS)}"],
    )


def check_backend(backend: str, settings: Mapping[str, Any]) -> None:
    """What `--dry-run` checks of the backend without spending or starting anything, raising
    the same ProveError the real run would: modal and burla are configured for real (the
    extra, Modal's token, the --image table, every setting); dask and ray get their extra
    checked (a cluster is neither started nor reached); local gets its settings checked."""
    if backend in ("modal", "burla", "local"):
        make_executor(backend, settings)
        return
    if backend == "dask":
        require("dask", "distributed")
    elif backend == "ray":
        require("ray", "ray")
    else:
        make_executor(backend, settings)  # refuses an unknown backend


def estimate_cost(backend: str, rollouts: int, settings: Mapping[str, Any]) -> float:
    """The plan's cost estimate in USD: est_seconds x rollouts x the price table
    (backends/pricing.py) for modal and burla, $0 for local, dask and ray."""
    return estimate_usd(backend, rollouts, settings)
