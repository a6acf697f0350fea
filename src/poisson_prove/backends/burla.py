"""The Burla backend (experimental): a thin adapter over `burla.remote_parallel_map`.

Burla runs on the user's own cloud cluster (`burla login`, `burla deploy`) and has no local
mode. Tasks go out in batches (its map takes a list), each call `run_task(task, job, retries,
backoff_s)`; with `generator=True` and `raise_errors=False` rows stream back as calls finish
and a failed call comes back as an exception object, which _mapped resubmits.

The SDK is reached only through the object passed as `sdk` (default: the imported `burla`
module); tests put a fake with the same `remote_parallel_map` there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import Any

from poisson_prove.backends._attempt import run_task
from poisson_prove.backends._extras import require
from poisson_prove.backends._mapped import stream_mapped
from poisson_prove.backends._settings import concurrency_setting, policy_for_job, retry_policy
from poisson_prove.backends.base import Executor
from poisson_prove.episode.run import Job, Task
from poisson_prove.errors import ProveError, ProveExit

DEFAULT_BATCH = 256


class BurlaExecutor(Executor):
    """Runs episodes as Burla calls.

    Settings read ([burla] merged with the command line): concurrency (max_parallelism),
    cpu (func_cpu, whole CPUs), memory (func_ram, GB), gpu (func_gpu), image (a container image
    whose Python has poisson-prove and the agent installed), infra_errors, infra_retries,
    infra_backoff, worker_retries. est_seconds and max_cost feed the estimate.
    """

    name = "burla"

    def __init__(self, settings: Mapping[str, Any], sdk: Any = None) -> None:
        self.sdk = sdk if sdk is not None else require("burla", "burla")
        self.settings = dict(settings)
        self.concurrency: int | None = (
            concurrency_setting(settings, 1, "burla") if settings.get("concurrency") else None
        )
        self.policy = retry_policy(settings, "burla")

    def map_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"generator": True, "raise_errors": False, "spinner": False}
        if self.concurrency:
            options["max_parallelism"] = self.concurrency
        if self.settings.get("cpu") is not None:
            options["func_cpu"] = max(1, int(self.settings["cpu"]))
        if self.settings.get("memory") is not None:
            options["func_ram"] = int(self.settings["memory"])
        if self.settings.get("gpu"):
            options["func_gpu"] = str(self.settings["gpu"])
        if isinstance(self.settings.get("image"), str):
            options["image"] = self.settings["image"]
        return options

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        policy, job = policy_for_job(self.policy, self.settings, job)
        options = self.map_options()
        batch_size = max(DEFAULT_BATCH, 4 * (self.concurrency or 0))

        def call_map(batch_tasks: Iterable[Task]) -> Iterator[Any]:
            source = iter(batch_tasks)
            while batch := list(islice(source, batch_size)):
                inputs = [(task, job, policy.retries, policy.backoff_s) for task in batch]
                try:
                    yield from self.sdk.remote_parallel_map(run_task, inputs, **options)
                except Exception as exc:  # the SDK's own failures (login, cluster, network)
                    raise ProveError(
                        f"Burla did not run the batch: {type(exc).__name__}: {exc}",
                        suggestions=["burla login", "the cluster must be running: burla deploy"],
                        exit_code=ProveExit.STOPPED,
                    ) from exc

        yield from stream_mapped(call_map, job, tasks, policy)
