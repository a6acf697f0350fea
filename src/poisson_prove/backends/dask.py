"""The Dask backend: episodes run on Dask workers, rows stream back to the sweep.

With `[dask] address` the sweep connects to that scheduler (any deployment: Kubernetes, an HPC
job queue, a cloud service) and leaves it running afterwards. Without it a LocalCluster is
started for the run, bound to 127.0.0.1 with no dashboard, speaking TLS with temporary
credentials made for this sweep (so no other process on the machine can connect to it and run
code in its workers), its scratch space in a temporary folder, and closed (folder removed) at
the end.

Attempts are submitted in a bounded window and collected as they complete. A worker that dies
(killed, out of memory) has its tasks rescheduled by the scheduler; a task that outlives
`distributed.scheduler.allowed-failures` worker deaths comes back as KilledWorker and is
resubmitted by Prove up to `worker_retries` times. Either way each episode is yielded once.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import CancelledError
from typing import Any

from poisson_prove.backends._attempt import Attempt, run_attempt
from poisson_prove.backends._extras import require
from poisson_prove.backends._schedule import Window, WorkerLost, drive
from poisson_prove.backends._settings import (
    non_negative_float,
    policy_for_job,
    positive_int,
    retry_policy,
)
from poisson_prove.backends.base import Executor
from poisson_prove.episode.run import Job, Task
from poisson_prove.errors import ProveError

DEFAULT_LOCAL_WORKERS = 2
DEFAULT_THREADS_PER_WORKER = 4  # agents mostly wait on model APIs: more threads than cores
# Without a set concurrency, keep twice the cluster's threads submitted so no worker idles
# while a result travels back and the next episode travels out.
DEFAULT_WINDOW_PER_THREAD = 2


class _DaskEngine:
    def __init__(self, client: Any, job: Job) -> None:
        from distributed import KilledWorker  # dask extra: optional, only when the Dask backend runs

        self._client = client
        self._job = job
        self._killed_worker = KilledWorker
        self._prefix = f"prove-{job.run_id}-{uuid.uuid4().hex[:8]}"
        self._count = 0
        self._gathered: dict[str, Attempt] = {}

    def submit(self, task: Task, done: Callable[[], None]) -> Any:
        self._count += 1
        future = self._client.submit(
            run_attempt, self._job, task, key=f"{self._prefix}-{self._count}", pure=False
        )
        future.add_done_callback(lambda _: done())
        return future

    def prefetch(self, handles: list[Any]) -> None:
        """Fetch many finished results in one round trip instead of one each."""
        finished = [handle for handle in handles if handle.status == "finished"]
        if len(finished) > 1:
            try:
                attempts = self._client.gather(finished)
            except Exception:  # a result went with its worker: outcome() takes them one by one
                return
            for handle, attempt in zip(finished, attempts, strict=True):
                self._gathered[handle.key] = attempt

    def outcome(self, handle: Any) -> Attempt:
        if handle.key in self._gathered:
            return self._gathered.pop(handle.key)
        if handle.status == "cancelled":
            raise WorkerLost("the scheduler cancelled the episode")
        try:
            # A result lost with its worker after finishing is recomputed by the scheduler;
            # result() waits for that, or raises KilledWorker when the scheduler gives up.
            return handle.result()
        except self._killed_worker as exc:
            raise WorkerLost(str(exc)) from exc
        except CancelledError as exc:
            raise WorkerLost("the scheduler cancelled the episode") from exc

    def cancel(self, handles: list[Any]) -> None:
        if handles:
            try:
                self._client.cancel(handles, force=True)
            except Exception:  # the client may already be gone (Ctrl-C during shutdown)
                pass


class DaskExecutor(Executor):
    """Runs episodes on a Dask cluster.

    Settings read ([dask] merged with the command line): address (an existing scheduler,
    e.g. "tcp://10.0.0.5:8786"; default: a LocalCluster on 127.0.0.1 for the run), n_workers
    (LocalCluster worker processes, at most 2 by default), threads_per_worker (default: the
    concurrency shared evenly, or 4), concurrency (episodes at once; on an existing cluster,
    episodes in flight, default twice its threads), connect_timeout, infra_errors,
    infra_retries, infra_backoff, worker_retries.
    """

    name = "dask"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        require("dask", "distributed")
        self.address: str | None = settings.get("address") or None
        self.n_workers = positive_int(settings, "n_workers", DEFAULT_LOCAL_WORKERS, "dask")
        self.concurrency: int | None = (
            positive_int(settings, "concurrency", 1, "dask") if settings.get("concurrency") else None
        )
        self.n_workers, default_threads = self._layout(self.n_workers, self.concurrency)
        self.threads_per_worker = positive_int(settings, "threads_per_worker", default_threads, "dask")
        self.connect_timeout = non_negative_float(settings, "connect_timeout", 10.0, "dask")
        self.settings = dict(settings)
        self.policy = retry_policy(settings, "dask")
        # An existing scheduler is reached now, while the sweep has written nothing, so an
        # unreachable one is a refusal (exit 1) rather than a run stopped at its start.
        self._client: Any = self._reach(self.address) if self.address else None

    @staticmethod
    def _layout(n_workers: int, concurrency: int | None) -> tuple[int, int]:
        """Workers and threads of the local cluster: exactly `concurrency` threads in all
        (the most workers up to n_workers that divide it evenly), so that at most that many
        episodes run at once however many are queued."""
        if not concurrency:
            return n_workers, DEFAULT_THREADS_PER_WORKER
        workers = max(w for w in range(1, min(n_workers, concurrency) + 1) if concurrency % w == 0)
        return workers, concurrency // workers

    def _window(self, cluster_threads: int, own_cluster: bool) -> int:
        """Episodes in flight. On the run's own cluster, whose threads cap what runs at once,
        as many again wait queued on the workers so none idles while a result travels back;
        on an existing cluster, `concurrency` is the cap on what is in flight."""
        if own_cluster:
            running = min(cluster_threads, self.concurrency or cluster_threads)
            return running + cluster_threads if cluster_threads <= running else running
        return self.concurrency or DEFAULT_WINDOW_PER_THREAD * cluster_threads

    def _reach(self, address: str) -> Any:
        from distributed import Client  # dask extra: optional, only when the Dask backend runs

        try:
            return Client(address, timeout=f"{self.connect_timeout}s")
        except (OSError, TimeoutError) as exc:
            raise ProveError(
                f"cannot reach the Dask scheduler at {address}: {exc}",
                suggestions=["check [dask] address, or remove it to run a local cluster"],
            ) from exc

    def _connect(self, scratch: str) -> tuple[Any, Any]:
        from distributed import Client, LocalCluster  # dask extra: optional, only when the Dask backend runs
        from distributed.security import Security  # dask extra: optional, only when the Dask backend runs

        if self._client is not None:
            client, self._client = self._client, None
            return client, None
        # Loopback is not enough on a shared host: any local user could connect to the scheduler
        # and run code in our workers. Temporary TLS credentials made for this sweep alone (kept
        # in memory) mean only this process and the workers it starts can talk to the cluster.
        security = Security.temporary()
        cluster = LocalCluster(
            protocol="tls://",
            security=security,
            n_workers=self.n_workers,
            threads_per_worker=self.threads_per_worker,
            processes=True,
            host="127.0.0.1",  # scheduler, workers and nannies listen on loopback only
            dashboard_address=None,
            worker_dashboard_address=None,
            # No dashboard; the scheduler's small HTTP server (health, metrics) still starts, so
            # it gets a free loopback port rather than 8787, which another cluster may hold.
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            local_directory=scratch,
            # Dask's own ERROR lines (a worker that lost the scheduler at shutdown, one killed
            # mid-sweep) come with tracebacks, in the worker processes' stderr; what they mean
            # reaches the user as the sweep's own lines (lost episodes are rerun and counted).
            silence_logs=logging.CRITICAL,
        )
        return Client(cluster, security=security), cluster

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        policy, job = policy_for_job(self.policy, self.settings, job)
        scratch = tempfile.mkdtemp(prefix="prove-dask-")
        client = cluster = None
        try:
            client, cluster = self._connect(scratch)
            threads = max(1, sum(client.nthreads().values()))
            window = self._window(threads, own_cluster=cluster is not None)
            yield from drive(_DaskEngine(client, job), job, tasks, Window(window), policy)
        finally:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
            shutil.rmtree(scratch, ignore_errors=True)
