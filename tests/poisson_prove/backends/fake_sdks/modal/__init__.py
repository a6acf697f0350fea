"""A stand-in for the `modal` SDK with the interface Prove's adapter calls, for tests only.

It runs the function in local threads (max_containers at once), emulates the image's
add_local_dir mount by mapping the remote path back to the local folder, refuses what the
real SDK refuses (map outside app.run(), unknown function options), and can lose calls the way
a preempted container does ($FAKE_SDK_LOSE). Everything it is asked is logged ($FAKE_SDK_LOG).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from _fake_record import losses, record

__version__ = "0.0-fake"

# The keyword arguments of modal 1.6's App.function, as the real signature lists them.
FUNCTION_OPTIONS = {
    "image", "schedule", "env", "secrets", "gpu", "serialized", "network_file_systems",
    "volumes", "cpu", "memory", "ephemeral_disk", "min_containers", "max_containers",
    "buffer_containers", "scaledown_window", "proxy", "retries", "timeout", "startup_timeout",
    "name", "is_generator", "cloud", "region", "routing_region", "nonpreemptible",
    "enable_memory_snapshot", "block_network", "restrict_modal_access", "single_use_containers",
    "i6pn", "include_source", "experimental_options", "max_inputs",
}


class Retries:
    def __init__(
        self,
        *,
        max_retries: int,
        backoff_coefficient: float = 2.0,
        initial_delay: float = 1.0,
        max_delay: float = 60.0,
    ) -> None:
        self.max_retries = max_retries
        self.backoff_coefficient = backoff_coefficient
        self.initial_delay = initial_delay

    def __repr__(self) -> str:
        return f"Retries(max_retries={self.max_retries}, backoff_coefficient={self.backoff_coefficient})"


class Image:
    def __init__(self, ops: tuple[tuple[str, Any], ...]) -> None:
        self.ops = ops

    def _with(self, op: str, value: Any) -> Image:
        return Image((*self.ops, (op, value)))

    @staticmethod
    def debian_slim(python_version: str | None = None, force_build: bool = False) -> Image:
        return Image((("debian_slim", python_version),))

    def apt_install(self, *packages: str) -> Image:
        return self._with("apt_install", list(packages))

    def run_commands(self, *commands: str) -> Image:
        return self._with("run_commands", list(commands))

    def pip_install(self, *packages: str) -> Image:
        return self._with("pip_install", list(packages))

    def env(self, variables: dict[str, str]) -> Image:
        return self._with("env", dict(variables))

    def add_local_python_source(self, *modules: str, copy: bool = False) -> Image:
        return self._with("add_local_python_source", list(modules))

    def add_local_dir(self, local_path: Any, remote_path: str, *, copy: bool = False) -> Image:
        return self._with("add_local_dir", [str(local_path), remote_path])

    def mounts(self) -> dict[str, str]:
        return {remote: local for op, value in self.ops if op == "add_local_dir" for local, remote in [value]}


class Function:
    def __init__(self, app: App, fn: Callable[..., Any], options: dict[str, Any]) -> None:
        self._app = app
        self._fn = fn
        self._options = options

    def _call(self, item: Any, kwargs: dict[str, Any]) -> Any:
        image: Image = self._options.get("image") or Image(())
        job = kwargs.get("job")
        mounts = image.mounts()
        if job is not None and job.spec_dir in mounts:  # the container sees the mounted folder
            kwargs = {**kwargs, "job": dataclasses.replace(job, spec_dir=mounts[job.spec_dir])}
        return self._fn(item, **kwargs)

    def map(
        self,
        *input_iterators: Iterable[Any],
        kwargs: dict[str, Any] | None = None,
        order_outputs: bool = True,
        return_exceptions: bool = False,
        wrap_returned_exceptions: bool | None = None,
    ) -> Iterator[Any]:
        if not self._app.running:
            raise RuntimeError("Function.map called outside app.run()")
        items = list(input_iterators[0])
        record("map", inputs=len(items), order_outputs=order_outputs, return_exceptions=return_exceptions,
               kwargs=sorted((kwargs or {}).keys()))
        containers = self._options.get("max_containers") or 4
        to_lose = losses() if self._app.lost < losses() else 0
        with concurrent.futures.ThreadPoolExecutor(containers) as pool:
            futures = []
            for item in items:
                if to_lose > 0:
                    to_lose -= 1
                    self._app.lost += 1
                    lost = pool.submit(_lost_container)
                    futures.append(lost)
                else:
                    futures.append(pool.submit(self._call, item, dict(kwargs or {})))
            ordered = futures if order_outputs else concurrent.futures.as_completed(futures)
            for future in ordered:
                error = future.exception()
                if error is None:
                    yield future.result()
                elif return_exceptions:
                    yield error
                else:
                    raise error


def _lost_container() -> Any:
    raise ConnectionError("container was preempted")


class App:
    def __init__(self, name: str | None = None, **_: Any) -> None:
        self.name = name
        self.running = False
        self.lost = 0
        self._lock = threading.Lock()
        record("App", name=name)

    def function(self, **options: Any) -> Callable[[Callable[..., Any]], Function]:
        unknown = set(options) - FUNCTION_OPTIONS
        if unknown:
            raise TypeError(f"App.function() got unexpected keyword arguments {sorted(unknown)}")
        image = options.get("image")
        record(
            "function",
            options={k: v for k, v in options.items() if k != "image"},
            image=[list(op) for op in image.ops] if image is not None else None,
        )

        def decorate(fn: Callable[..., Any]) -> Function:
            record("decorated", function=f"{fn.__module__}.{fn.__qualname__}")
            return Function(self, fn, options)

        return decorate

    @contextlib.contextmanager
    def run(self, **_: Any) -> Iterator[App]:
        record("run", state="enter")
        self.running = True
        try:
            yield self
        finally:
            self.running = False
            record("run", state="exit")
