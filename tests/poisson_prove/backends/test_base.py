"""backends/base.py: the one executor interface. It cannot be used without `execute`; every
backend's executors implement it under their backend's name; only the sequential local
backend claims the caller's thread (the default is no)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from poisson_prove.backends import BACKENDS
from poisson_prove.backends.base import Executor
from poisson_prove.backends.burla import BurlaExecutor
from poisson_prove.backends.dask import DaskExecutor
from poisson_prove.backends.local import LocalExecutor
from poisson_prove.backends.modal import ModalExecutor
from poisson_prove.backends.pool import DefaultLocalExecutor, PoolExecutor
from poisson_prove.backends.ray import RayExecutor
from poisson_prove.episode.run import Job, Task

EXECUTORS = {
    "local": (LocalExecutor, PoolExecutor, DefaultLocalExecutor),
    "dask": (DaskExecutor,),
    "ray": (RayExecutor,),
    "modal": (ModalExecutor,),
    "burla": (BurlaExecutor,),
}
JOB = Job(run_id="r", target="agent:rollout", spec_dir=".", outcomes=("ok", "bad"))


def test_the_interface_cannot_run_without_execute() -> None:
    with pytest.raises(TypeError, match="abstract"):
        Executor()  # type: ignore[abstract]

    class Half(Executor):
        name = "half"

    with pytest.raises(TypeError, match="execute"):
        Half()  # type: ignore[abstract]


def test_by_default_an_executor_does_not_claim_the_callers_thread() -> None:
    class Remote(Executor):
        name = "remote"

        def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
            yield from ()

    assert Remote().runs_in_caller(JOB) is False


def test_every_backend_has_executors_of_its_own_name() -> None:
    assert set(EXECUTORS) == set(BACKENDS)
    for backend, classes in EXECUTORS.items():
        for cls in classes:
            assert issubclass(cls, Executor) and cls.name == backend, cls


def test_only_the_local_backend_may_run_episodes_in_the_callers_thread() -> None:
    for backend, classes in EXECUTORS.items():
        if backend == "local":
            continue
        for cls in classes:  # pools, clusters and remote workers keep the interface's answer
            assert cls.runs_in_caller is Executor.runs_in_caller, cls
