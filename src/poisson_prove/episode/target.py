"""The target: the user's rollout function, imported by name ("pkg.module:function") with the
spec's folder first on sys.path, its signature checked, once per process.

Whatever the import does wrong (raises, calls sys.exit or os._exit, names nothing callable,
takes other arguments than (cfg, seed)) is one TargetError with the sentence to show; the
rollout is never called here.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

from poisson_prove.episode.capture import enable_capture
from poisson_prove.episode.run import Job, ProcessExit, Rollout, os_exit_guard
from poisson_prove.errors import ProveError


class TargetError(ProveError):
    """The target does not import, is not there, or does not take (cfg, seed)."""


class TargetExitedError(TargetError):
    """The target called sys.exit while its module was imported; `exit_status` is what it
    passed to sys.exit."""

    def __init__(self, target: str, exit_status: Any) -> None:
        super().__init__(f'target "{target}" called sys.exit({exit_status!r}) while importing')
        self.exit_status = exit_status


def import_target(target: str, spec_dir: str | None) -> Rollout:
    """Import `module:function` with `spec_dir` first on sys.path; raise TargetError if it fails.

    A target that calls sys.exit while importing raises TargetExitedError (its `exit_status`
    attribute is set), never SystemExit.
    """
    module_name, _, attr = target.partition(":")
    if spec_dir:
        if spec_dir in sys.path:
            sys.path.remove(spec_dir)
        sys.path.insert(0, spec_dir)
    try:
        with os_exit_guard():
            module = importlib.import_module(module_name)
    except ProcessExit as exc:
        raise TargetError(
            f'target "{target}" called os._exit({exc.code!r}) while importing',
            suggestions=["a module should not end its process when it is imported"],
        ) from None
    except SystemExit as exc:
        raise TargetExitedError(target, exc.code) from exc
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        first = (str(exc).strip().splitlines() or [""])[0]
        raise TargetError(
            f'target "{target}" does not import: {type(exc).__name__}: {first}',
            suggestions=[f"python -c 'import {module_name}' in the spec's folder shows the whole error"],
        ) from exc
    function = getattr(module, attr, None)
    if function is None:
        raise TargetError(f'target "{target}": module {module_name} has no {attr}')
    if not callable(function):
        raise TargetError(f'target "{target}" is not a function (it is {type(function).__name__})')
    check_signature(target, function)
    return function


def check_signature(target: str, function: Callable[..., Any]) -> None:
    """Raise TargetError unless `function(cfg, seed)` would bind (it is not called)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # a builtin or C function without a signature: it is tried at run time
    try:
        signature.bind({}, 0)
    except TypeError as exc:
        raise TargetError(
            f'target "{target}" does not take (cfg, seed): its signature is {function.__name__}{signature}',
            suggestions=["define it as def rollout(cfg, seed): ... returning poisson_prove.Episode"],
        ) from exc


_LOADED: dict[tuple[str, str], Rollout] = {}


def load_target(job: Job) -> Rollout:
    """The job's rollout function, imported once per process (spec_dir first on sys.path)."""
    key = (job.target, job.spec_dir)
    function = _LOADED.get(key)
    if job.capture:  # this run's content rule and byte limit; instrumentors once per process
        enable_capture(job.capture)
    if function is None:
        function = _LOADED[key] = import_target(job.target, job.spec_dir)
    return function
