"""A stand-in for the `burla` SDK's remote_parallel_map, for tests only: local threads,
tuples unpacked as Burla does, calls lost on request ($FAKE_SDK_LOSE), everything logged."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator
from typing import Any

from _fake_record import losses, record

__version__ = "0.0-fake"
_lost_so_far = 0


def _lost() -> Any:
    raise ConnectionError("node was preempted")


def remote_parallel_map(
    function_: Callable[..., Any],
    inputs: list,
    func_cpu: int | str = "dynamic",
    func_ram: int | str = "dynamic",
    func_gpu: str | None = None,
    image: str | None = None,
    grow: bool = False,
    max_parallelism: int | None = None,
    detach: bool = False,
    generator: bool = False,
    raise_errors: bool = True,
    spinner: bool = True,
    region: str | None = None,
    disk_gb: int | None = None,
) -> Any:
    global _lost_so_far
    if not isinstance(inputs, list):
        raise TypeError("inputs must be a list")
    record("remote_parallel_map", inputs=len(inputs), func_cpu=func_cpu, func_ram=func_ram,
           func_gpu=func_gpu, image=image, max_parallelism=max_parallelism, generator=generator,
           raise_errors=raise_errors, spinner=spinner, function=function_.__qualname__)

    def results() -> Iterator[Any]:
        global _lost_so_far
        with concurrent.futures.ThreadPoolExecutor(max_parallelism or 4) as pool:
            futures = []
            for item in inputs:
                if _lost_so_far < losses():
                    _lost_so_far += 1
                    futures.append(pool.submit(_lost))
                    continue
                args = item if isinstance(item, tuple) else (item,)
                futures.append(pool.submit(function_, *args))
            for future in concurrent.futures.as_completed(futures):
                error = future.exception()
                if error is None:
                    yield future.result()
                elif raise_errors:
                    raise error
                else:
                    yield error

    return results() if generator else list(results())
