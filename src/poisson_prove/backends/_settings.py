"""Reading a backend's settings dict (its spec table merged with the command line's overrides).

The spec's tables are type-checked by tables.py; these readers add the range checks and the
defaults, and say which key was wrong in the one `error:` line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from poisson_prove.backends._schedule import RetryPolicy
from poisson_prove.episode.run import Job
from poisson_prove.errors import ProveError

#: The most episodes (threads, containers, tasks) at once, by --concurrency or a backend's table:
#: beyond it a machine runs out of threads before the sweep learns anything more.
MAX_CONCURRENCY = 4_096
DEFAULT_INFRA_RETRIES = 3
DEFAULT_INFRA_BACKOFF_S = 1.0
DEFAULT_WORKER_RETRIES = 3


def positive_int(settings: Mapping[str, Any], key: str, default: int, backend: str) -> int:
    value = settings.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProveError(f"[{backend}] {key} must be a whole number of at least 1, got {value!r}")
    return value


def concurrency_setting(settings: Mapping[str, Any], default: int, backend: str) -> int:
    """The table's `concurrency`: a whole number from 1 to MAX_CONCURRENCY."""
    value = positive_int(settings, "concurrency", default, backend)
    if value > MAX_CONCURRENCY:
        raise ProveError(
            f"[{backend}] concurrency must be at most {MAX_CONCURRENCY:,} (episodes at once), got {value:,}",
            suggestions=[f"set [{backend}] concurrency to {MAX_CONCURRENCY:,} or fewer"],
        )
    return value


def non_negative_int(settings: Mapping[str, Any], key: str, default: int, backend: str) -> int:
    value = settings.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProveError(f"[{backend}] {key} must be a whole number of at least 0, got {value!r}")
    return value


def non_negative_float(
    settings: Mapping[str, Any], key: str, default: float, backend: str
) -> float:
    value = settings.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
        math.isfinite(value) and value >= 0
    ):
        raise ProveError(f"[{backend}] {key} must be a number of at least 0, got {value!r}")
    return float(value)


def name_list(settings: Mapping[str, Any], key: str, backend: str) -> tuple[str, ...] | None:
    value = settings.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(item, str) and item.strip() for item in value
    ):
        raise ProveError(
            f"[{backend}] {key} must be a list of exception type names, got {value!r}",
            suggestions=[f'{key} = ["RateLimitError", "mypkg.errors.Throttled"]'],
        )
    return tuple(item.strip() for item in value)


def retry_policy(settings: Mapping[str, Any], backend: str) -> RetryPolicy:
    """infra_errors, infra_retries, infra_backoff and worker_retries from the settings."""
    return RetryPolicy(
        infra_errors=name_list(settings, "infra_errors", backend) or (),
        retries=non_negative_int(settings, "infra_retries", DEFAULT_INFRA_RETRIES, backend),
        backoff_s=non_negative_float(settings, "infra_backoff", DEFAULT_INFRA_BACKOFF_S, backend),
        worker_retries=non_negative_int(settings, "worker_retries", DEFAULT_WORKER_RETRIES, backend),
    )


def policy_for_job(policy: RetryPolicy, settings: Mapping[str, Any], job: Job) -> tuple[RetryPolicy, Job]:
    """Merge what the job carries (the sweep may fill infra_errors/infra_retries there) with the
    settings; the settings win. The returned job names the infrastructure errors workers detect."""
    infra_errors = policy.infra_errors or tuple(job.infra_errors)
    retries = policy.retries
    if settings.get("infra_retries") is None and job.infra_retries:
        retries = job.infra_retries
    merged = replace(policy, infra_errors=infra_errors, retries=retries)
    return merged, replace(job, infra_errors=infra_errors, infra_retries=retries)
