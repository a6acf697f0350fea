"""The Dask backend: episodes run on Dask workers, rows stream back to the sweep.

With `[dask] address` the sweep connects to that scheduler (any deployment: Kubernetes, an HPC
job queue, a cloud service), with Dask's own `Security` (the table's TLS files, else Dask's
config), and leaves it running afterwards; a library caller may hand over a Client or a cluster
object instead (`overrides={"client": ...}`: dask-gateway, Coiled). On such a cluster the spec's
folder is shipped to the workers and the variables named by `env` are set there (worker plugins,
removed at the end: _dask_worker.py), and the workers' instrumentors are checked before the
run's manifest is written (`capture_missing`). Without either a LocalCluster is
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
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError
from pathlib import Path
from typing import Any

from poisson_prove.backends._attempt import Attempt
from poisson_prove.backends._extras import require
from poisson_prove.backends._schedule import Window, WorkerLost, drive
from poisson_prove.backends._settings import (
    concurrency_setting,
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
# The spec's folder travels through the scheduler to every worker: past this it is refused.
MAX_UPLOAD_BYTES = 100 * 2**20
TLS_KEYS = ("tls_ca_file", "tls_client_cert", "tls_client_key")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _DaskEngine:
    def __init__(self, client: Any, job: Job, folder: str | None = None) -> None:
        from distributed import KilledWorker  # dask extra: optional, only when the Dask backend runs

        from poisson_prove.backends._dask_worker import run_on_worker  # imports distributed: Dask runs only

        self._client = client
        self._job = job
        self._folder = folder  # the shipped spec folder's name on the workers, if shipped
        self._run = run_on_worker
        self._killed_worker = KilledWorker
        self._prefix = f"prove-{job.run_id}-{uuid.uuid4().hex[:8]}"
        self._count = 0
        self._gathered: dict[str, Attempt] = {}

    def submit(self, task: Task, done: Callable[[], None]) -> Any:
        self._count += 1
        future = self._client.submit(
            self._run, self._job, task, self._folder, key=f"{self._prefix}-{self._count}", pure=False
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
    e.g. "tls://10.0.0.5:8786"; default: a LocalCluster on 127.0.0.1 for the run), client (from
    Python only: a distributed.Client, or a cluster object with get_client() or that Client()
    takes), tls_ca_file, tls_client_cert, tls_client_key and require_encryption (Security for
    `address`; default Dask's config), upload (ship the spec's folder; default on with an
    address or client), env (variable names set on the workers from this process), n_workers
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
            concurrency_setting(settings, 1, "dask") if settings.get("concurrency") else None
        )
        self.n_workers, default_threads = self._layout(self.n_workers, self.concurrency)
        self.threads_per_worker = positive_int(settings, "threads_per_worker", default_threads, "dask")
        self.connect_timeout = non_negative_float(settings, "connect_timeout", 10.0, "dask")
        self.settings = dict(settings)
        self.policy = retry_policy(settings, "dask")
        handed = settings.get("client")
        if handed is not None and self.address:
            raise ProveError(
                "[dask] has both an address and a client: name one cluster",
                suggestions=["drop [dask] address when handing over a client"],
            )
        self.security = self._security()
        self.env = self._environment(settings.get("env"))
        existing = handed is not None or bool(self.address)
        upload = settings.get("upload")
        self.upload = existing if upload is None else bool(upload)
        self._owns_client = handed is None
        # An existing scheduler is reached now, while the sweep has written nothing, so an
        # unreachable one is a refusal (exit 1) rather than a run stopped at its start.
        self._client: Any = None
        if handed is not None:
            self._client, self._owns_client = self._adopt(handed)
        elif self.address:
            self._client = self._reach(self.address)

    def _security(self) -> Any:
        """Dask's Security for `address`: the table's TLS files, else None (Dask's config)."""
        files = {key: self.settings[key] for key in TLS_KEYS if self.settings.get(key)}
        required = self.settings.get("require_encryption")
        if not files and required is None:
            return None
        for key, path in files.items():
            if not Path(path).is_file():
                raise ProveError(
                    f"[dask] {key}: no file {path}",
                    suggestions=[f"point {key} at a PEM file, relative to the spec's folder"],
                )
        if files and self.address and not self.address.startswith("tls://"):
            raise ProveError(
                f"[dask] names TLS files but address {self.address} is not tls://",
                suggestions=[f"address = \"tls://{self.address.split('://')[-1]}\""],
            )
        from distributed.security import Security  # dask extra: optional, only when the Dask backend runs

        return Security(require_encryption=required, **files)

    @staticmethod
    def _environment(names: Any) -> dict[str, str]:
        """The named variables' values in this process, for the workers; a name that is not a
        variable name, or not set here, is refused."""
        if names is None:
            return {}
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
            raise ProveError(f"[dask] env must be a list of variable names, got {names!r}")
        bad = [name for name in names if not _ENV_NAME.match(name)]
        if bad:
            raise ProveError(f"[dask] env: {bad[0]!r} is not an environment variable name")
        unset = [name for name in names if name not in os.environ]
        if unset:
            raise ProveError(
                f"[dask] env names {', '.join(unset)}, not set in the sweep's environment",
                suggestions=[f"export {unset[0]}=... before the sweep, or drop it from [dask] env"],
            )
        return {name: os.environ[name] for name in names}

    def _adopt(self, handed: Any) -> tuple[Any, bool]:
        """A Client handed over from Python (kept open at the end), or a cluster object: its
        get_client() (dask-gateway, Coiled) or Client(cluster); those clients are ours to close."""
        from distributed import Client  # dask extra: optional, only when the Dask backend runs

        if isinstance(handed, Client):
            return handed, False
        try:
            if callable(getattr(handed, "get_client", None)):
                return handed.get_client(), True
            return Client(handed, security=self.security, timeout=f"{self.connect_timeout}s"), True
        except Exception as exc:  # whatever the cluster object raises: one error line, not a traceback
            raise ProveError(
                f"cannot connect to the Dask cluster {type(handed).__name__}: {type(exc).__name__}: {exc}",
                suggestions=["pass a distributed.Client, or a cluster object Client() accepts"],
            ) from exc

    def capture_missing(self, instrument: Sequence[str]) -> dict[str, str]:
        """For an existing cluster: each named instrumentor that some connected worker lacks,
        with how many lack it (a LocalCluster's workers share this machine's packages)."""
        if self._client is None or not instrument:
            return {}
        from poisson_prove.backends._dask_worker import missing_here  # imports distributed: Dask runs only

        try:
            answers = self._client.run(missing_here, list(instrument))
        except Exception as exc:  # a worker that cannot answer: said, not silently spanless
            why = f"not checked on the Dask workers: {type(exc).__name__}: {exc}"
            return {name: why for name in instrument}
        out: dict[str, str] = {}
        for name in instrument:
            lacking = sorted(address for address, missing in answers.items() if name in missing)
            if lacking:
                why = answers[lacking[0]][name].split(" (")[0]
                shown = ", ".join(lacking[:3]) + (", ..." if len(lacking) > 3 else "")
                out[name] = f"{why} on {len(lacking)} of {len(answers)} Dask workers: {shown}"
        return out

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
            return Client(address, security=self.security, timeout=f"{self.connect_timeout}s")
        except (OSError, TimeoutError, ValueError) as exc:
            # ValueError: a TLS address without credentials, or a bad key file (Dask's own text)
            raise ProveError(
                f"cannot reach the Dask scheduler at {address}: {exc}",
                suggestions=["check [dask] address and its TLS files, or remove address for a local cluster"],
            ) from exc

    def _connect(self, scratch: str) -> tuple[Any, Any]:
        from distributed import Client, LocalCluster  # dask extra: optional, only when the Dask backend runs
        from distributed.security import Security  # dask extra: optional, only when the Dask backend runs

        if self._client is not None:
            client = self._client
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

    def _install(self, client: Any, job: Job) -> tuple[list[str], str | None]:
        """Register the worker plugins an existing cluster needs (the variables of `env`, the
        spec's folder): their names, to unregister at the end, and the folder's name on the
        workers (None when not shipped)."""
        from poisson_prove.backends._dask_worker import (  # imports distributed: Dask runs only
            Environment,
            SpecFolder,
            spec_folder_zip,
        )

        tag = f"prove-{job.run_id}-{uuid.uuid4().hex[:6]}"
        names: list[str] = []
        if self.env:
            client.register_plugin(Environment(self.env), name=f"{tag}-env")
            names.append(f"{tag}-env")
        folder = None
        if self.upload:
            secrets = [Path(self.settings[key]) for key in TLS_KEYS if self.settings.get(key)]
            data, _ = spec_folder_zip(Path(job.spec_dir), exclude=secrets)
            if len(data) > MAX_UPLOAD_BYTES:
                raise ProveError(
                    f"the spec's folder {job.spec_dir} is {len(data) / 2**20:.0f} MB zipped, more than "
                    f"the {MAX_UPLOAD_BYTES // 2**20} MB shipped to Dask workers",
                    suggestions=["set [dask] upload = false and install your agent on the workers"],
                )
            folder = f"{tag}-spec"
            client.register_plugin(SpecFolder(folder, data), name=folder)
            names.append(folder)
        return names, folder

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        policy, job = policy_for_job(self.policy, self.settings, job)
        scratch = tempfile.mkdtemp(prefix="prove-dask-")
        client: Any = None
        cluster: Any = None
        plugins: list[str] = []
        try:
            client, cluster = self._connect(scratch)
            folder = None
            if cluster is None:  # an existing cluster: ship what its workers lack
                plugins, folder = self._install(client, job)
            threads = max(1, sum(client.nthreads().values()))
            window = self._window(threads, own_cluster=cluster is not None)
            yield from drive(_DaskEngine(client, job, folder), job, tasks, Window(window), policy)
        finally:
            for name in reversed(plugins):
                try:
                    client.unregister_worker_plugin(name)  # teardown: folder removed, variables restored
                except Exception:  # the cluster may be gone (Ctrl-C, a lost scheduler)
                    pass
            if client is not None and (cluster is not None or self._owns_client):
                client.close()
            self._client = None
            if cluster is not None:
                cluster.close()
            shutil.rmtree(scratch, ignore_errors=True)
