"""backends/_settings.py: a backend's settings read with their ranges and defaults, each wrong
value one `error:` line naming the table and key, and the job's retry fields merged in."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from poisson_prove.backends._schedule import RetryPolicy
from poisson_prove.backends._settings import (
    DEFAULT_INFRA_BACKOFF_S,
    DEFAULT_INFRA_RETRIES,
    DEFAULT_WORKER_RETRIES,
    name_list,
    non_negative_float,
    non_negative_int,
    policy_for_job,
    positive_int,
    retry_policy,
)
from poisson_prove.episode.run import Job
from poisson_prove.errors import ProveError

JOB = Job(run_id="r", target="agent:rollout", spec_dir=".", outcomes=("ok", "bad"))


def test_a_missing_key_is_its_default_and_a_good_value_is_kept() -> None:
    assert positive_int({}, "concurrency", 4, "local") == 4
    assert positive_int({"concurrency": 16}, "concurrency", 4, "local") == 16
    assert non_negative_int({"infra_retries": 0}, "infra_retries", 3, "dask") == 0
    assert non_negative_float({"infra_backoff": 2}, "infra_backoff", 1.0, "ray") == 2.0
    assert type(non_negative_float({"infra_backoff": 2}, "infra_backoff", 1.0, "ray")) is float
    assert name_list({}, "infra_errors", "local") is None


@pytest.mark.parametrize("value", [0, -1, 2.0, True, "4"])
def test_a_count_of_at_least_one_refuses_anything_else(value: object) -> None:
    with pytest.raises(ProveError) as caught:
        positive_int({"concurrency": value}, "concurrency", 4, "local")
    assert caught.value.message == f"[local] concurrency must be a whole number of at least 1, got {value!r}"


@pytest.mark.parametrize("value", [-1, 1.5, False])
def test_a_count_of_at_least_zero_refuses_anything_else(value: object) -> None:
    with pytest.raises(ProveError) as caught:
        non_negative_int({"worker_retries": value}, "worker_retries", 3, "modal")
    wanted = f"[modal] worker_retries must be a whole number of at least 0, got {value!r}"
    assert caught.value.message == wanted


@pytest.mark.parametrize("value", [-0.5, math.inf, math.nan, True, "1"])
def test_a_number_of_seconds_must_be_finite_and_not_negative(value: object) -> None:
    with pytest.raises(ProveError) as caught:
        non_negative_float({"infra_backoff": value}, "infra_backoff", 1.0, "burla")
    assert caught.value.message == f"[burla] infra_backoff must be a number of at least 0, got {value!r}"


def test_exception_names_are_a_list_or_one_name_stripped() -> None:
    assert name_list({"infra_errors": " RateLimitError "}, "infra_errors", "local") == ("RateLimitError",)
    names = ["RateLimitError", "mypkg.errors.Throttled"]
    assert name_list({"infra_errors": names}, "infra_errors", "local") == tuple(names)
    for bad in (["RateLimitError", ""], [3], {"a": 1}):
        with pytest.raises(ProveError) as caught:
            name_list({"infra_errors": bad}, "infra_errors", "dask")
        error = caught.value
        assert error.message == f"[dask] infra_errors must be a list of exception type names, got {bad!r}"
        assert list(error.suggestions) == ['infra_errors = ["RateLimitError", "mypkg.errors.Throttled"]']


def test_the_retry_policy_reads_four_keys_with_their_defaults() -> None:
    assert retry_policy({}, "local") == RetryPolicy(
        (), DEFAULT_INFRA_RETRIES, DEFAULT_INFRA_BACKOFF_S, DEFAULT_WORKER_RETRIES
    )
    settings = {"infra_errors": ["Throttled"], "infra_retries": 1, "infra_backoff": 0.25, "worker_retries": 0}
    assert retry_policy(settings, "modal") == RetryPolicy(("Throttled",), 1, 0.25, 0)
    with pytest.raises(ProveError, match=r"^\[ray\] infra_retries must be"):
        retry_policy({"infra_retries": -2}, "ray")


def test_the_settings_win_over_the_job_and_the_job_learns_the_merged_policy() -> None:
    filled = replace(JOB, infra_errors=("FromSweep",), infra_retries=5)
    # nothing in the settings: the job's own names and retries are used, and stay on the job
    policy, job = policy_for_job(retry_policy({}, "local"), {}, filled)
    assert (policy.infra_errors, policy.retries) == (("FromSweep",), 5)
    assert (tuple(job.infra_errors), job.infra_retries) == (("FromSweep",), 5)
    # the table names both: it wins, and the job carries its values to the workers
    settings = {"infra_errors": ["FromTable"], "infra_retries": 1}
    policy, job = policy_for_job(retry_policy(settings, "local"), settings, filled)
    assert (policy.infra_errors, policy.retries) == (("FromTable",), 1)
    assert (tuple(job.infra_errors), job.infra_retries) == (("FromTable",), 1)
    # a job without retries of its own keeps the policy's default count
    policy, job = policy_for_job(retry_policy({}, "local"), {}, JOB)
    assert (policy.infra_errors, policy.retries, job.infra_retries) == ((), DEFAULT_INFRA_RETRIES, 3)
