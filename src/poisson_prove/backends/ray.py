"""The Ray backend: episodes run as Ray tasks, rows stream back to the sweep.

With `[ray] address` the sweep joins that cluster (e.g. "ray://head:10001" or "auto") and
leaves it running. Without it, `ray.init` starts a local instance for the run with the
dashboard off and its session files in a temporary folder, and `ray.shutdown()` stops exactly
that instance at the end; Prove never runs `ray stop`, which would end every Ray on the host.

Loopback: Ray 2.60's local instance binds its gRPC servers on every interface and rewrites
127.0.0.1 to the host's address, so no ray.init argument keeps it on loopback. Run it in a
network namespace with only `lo` (as the opt-in test does), or behind a firewall; see
docs/backends.md.

A task whose worker process dies is retried by Ray (`max_retries`); one Ray gives up on comes
back as WorkerLost and is resubmitted up to `worker_retries` times by the scheduling loop.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from poisson_prove.backends._attempt import Attempt, run_attempt
from poisson_prove.backends._extras import require
from poisson_prove.backends._schedule import Window, WorkerLost, drive
from poisson_prove.backends._settings import concurrency_setting, policy_for_job, positive_int, retry_policy
from poisson_prove.backends.base import Executor
from poisson_prove.episode.run import Job, Task
from poisson_prove.errors import ProveError, ProveExit


class _RayEngine:
    def __init__(self, ray: Any, job: Job, worker_retries: int) -> None:
        self._ray = ray
        self._job = ray.put(job)
        self._remote = ray.remote(run_attempt).options(
            max_retries=worker_retries, retry_exceptions=False, num_cpus=1
        )
        lost: list[type[BaseException]] = []
        for name in ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "TaskCancelledError"):
            cls = getattr(ray.exceptions, name, None)
            if cls is not None:
                lost.append(cls)
        self._lost = tuple(lost)
        self._task_error = ray.exceptions.RayTaskError
        self._fetched: dict[Any, Attempt] = {}

    def submit(self, task: Task, done: Callable[[], None]) -> Any:
        ref = self._remote.remote(self._job, task)
        ref.future().add_done_callback(lambda _: done())
        return ref

    def prefetch(self, handles: list[Any]) -> None:
        try:
            values = self._ray.get(handles)
        except Exception:  # one of them failed: fetch them one by one in outcome()
            return
        for handle, value in zip(handles, values, strict=True):
            self._fetched[handle] = value

    def outcome(self, handle: Any) -> Attempt:
        if handle in self._fetched:
            return self._fetched.pop(handle)
        try:
            return self._ray.get(handle)
        except self._lost as exc:
            raise WorkerLost(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc
        except self._task_error as exc:
            cause = exc.as_instanceof_cause() if hasattr(exc, "as_instanceof_cause") else exc
            raise cause from None

    def cancel(self, handles: list[Any]) -> None:
        for handle in handles:
            try:
                self._ray.cancel(handle, force=True)
            except Exception:  # already finished, or the cluster is going away
                pass


class RayExecutor(Executor):
    """Runs episodes on a Ray cluster.

    Settings read ([ray] merged with the command line): address (an existing cluster; default:
    a local instance for the run), num_cpus (the local instance's logical CPUs, default:
    concurrency), concurrency (episodes in flight, default 8), infra_errors, infra_retries,
    infra_backoff, worker_retries.
    """

    name = "ray"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        require("ray", "ray")
        self.address: str | None = settings.get("address") or None
        self.concurrency = concurrency_setting(settings, 8, "ray")
        self.num_cpus = positive_int(settings, "num_cpus", self.concurrency, "ray")
        self.settings = dict(settings)
        self.policy = retry_policy(settings, "ray")

    def _start(self, ray: Any, scratch: str) -> bool:
        """Connect or start; True when this run started the instance (and must shut it down)."""
        if ray.is_initialized():
            return False
        options: dict[str, Any] = {
            "include_dashboard": False,
            "logging_level": logging.ERROR,
            "log_to_driver": True,
        }
        try:
            if self.address:
                ray.init(address=self.address, **options)
            else:
                ray.init(num_cpus=self.num_cpus, _temp_dir=scratch, **options)
        except Exception as exc:
            where = self.address or "a local instance"
            raise ProveError(
                f"Ray did not start ({where}): {type(exc).__name__}: {exc}",
                suggestions=["check [ray] address, or remove it to start a local instance"],
                exit_code=ProveExit.STOPPED,
            ) from exc
        return True

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        import ray  # ray extra: optional, only when the Ray backend runs

        policy, job = policy_for_job(self.policy, self.settings, job)
        scratch = tempfile.mkdtemp(prefix="prove-ray-")
        started_here = False
        try:
            started_here = self._start(ray, scratch)
            engine = _RayEngine(ray, job, policy.worker_retries)
            yield from drive(engine, job, tasks, Window(self.concurrency), policy)
        finally:
            if started_here:
                ray.shutdown()
            shutil.rmtree(scratch, ignore_errors=True)
