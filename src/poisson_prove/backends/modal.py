"""The Modal backend: a thin adapter over the `modal` SDK.

One ephemeral app per sweep (`[modal] app_name`, default "poisson-prove"), one function
(`run_task`, shipped serialized) on an image built from a `[modal.SECTION]` table, and one
`Function.map` over the planned tasks with `order_outputs=False`, so rows stream back as
containers finish them. Closing the sweep leaves `app.run()`, which stops the app and its
queued inputs.

The SDK is reached only through the object passed as `sdk` (default: the imported `modal`
module); that is the seam tests use to put a fake with the same interface in its place.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from poisson_prove.backends._attempt import run_task
from poisson_prove.backends._extras import require
from poisson_prove.backends._mapped import stream_mapped
from poisson_prove.backends._settings import (
    concurrency_setting,
    non_negative_float,
    policy_for_job,
    retry_policy,
)
from poisson_prove.backends.base import Executor
from poisson_prove.episode.run import Job, Task
from poisson_prove.errors import ProveError, ProveExit
from prove_common.suggest import did_you_mean

DEFAULT_APP_NAME = "poisson-prove"
DEFAULT_IMAGE_SECTION = "image"
REMOTE_PROJECT = "/root/prove-project"  # where the spec's folder is mounted in the container
IMAGE_KEYS = {
    "python_version": str,  # default: this interpreter's major.minor
    "pip": list,  # extra packages for the agent
    "apt": list,
    "run": list,  # shell commands run while building
    "env": dict,
}


def _base_requirements() -> list[str]:
    """poisson-prove's own runtime requirements (the package source itself is mounted)."""
    try:
        requires = importlib.metadata.requires("poisson-prove") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [req.split(";")[0].strip() for req in requires if "extra ==" not in req]


def image_sections(settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The [modal.SECTION] tables of the settings (sub-tables are kept as dicts)."""
    return {key: dict(value) for key, value in settings.items() if isinstance(value, Mapping)}


def chosen_section(settings: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The image table `--image SECTION` names (settings "image" as text), default [modal.image]."""
    sections = image_sections(settings)
    named = settings.get("image_section")
    if named is None and isinstance(settings.get("image"), str):
        named = settings["image"]
    name = str(named or DEFAULT_IMAGE_SECTION)
    if name not in sections:
        if named is None:
            return name, {}  # no [modal.image] table: the default image
        known = ", ".join(sorted(sections)) or "none"
        raise ProveError(
            f"--image {name}: the spec has no [modal.{name}] table{did_you_mean(name, sections)}",
            suggestions=[f"the image tables in the spec: {known}"],
        )
    table = sections[name]
    for key, value in table.items():
        if key not in IMAGE_KEYS:
            raise ProveError(
                f"[modal.{name}] unknown key {key!r}{did_you_mean(key, IMAGE_KEYS)}",
                suggestions=[f"the keys of an image table are: {', '.join(IMAGE_KEYS)}"],
            )
        if not isinstance(value, IMAGE_KEYS[key]):
            raise ProveError(
                f"[modal.{name}] {key} must be {IMAGE_KEYS[key].__name__}, got {value!r}"
            )
    return name, table


class ModalExecutor(Executor):
    """Runs episodes as Modal function calls.

    Settings read ([modal] merged with the command line): app_name, concurrency (containers
    at once: max_containers), infra_errors, infra_retries, infra_backoff, worker_retries
    (Modal-level retries of a lost container), cpu, memory (MiB), gpu, timeout (seconds per
    episode), image (the [modal.SECTION] to build from) and the image tables themselves.
    est_seconds and max_cost feed the estimate (pricing.py), compared by the sweep.
    """

    name = "modal"

    def __init__(self, settings: Mapping[str, Any], sdk: Any = None) -> None:
        if sdk is None:
            sdk = require("modal", "modal")
            try:
                importlib.import_module("modal.config")  # the token lookup below reads it
            except ImportError:
                pass
        self.sdk = sdk
        # Sub-tables are image sections, whatever their name ([modal.gpu] is not a GPU).
        self.settings = {k: v for k, v in settings.items() if not isinstance(v, Mapping)}
        scalars = self.settings
        self.app_name = str(scalars.get("app_name") or DEFAULT_APP_NAME)
        self.concurrency: int | None = (
            concurrency_setting(scalars, 1, "modal") if scalars.get("concurrency") else None
        )
        self.section_name, self.section = chosen_section(settings)
        self.policy = retry_policy(scalars, "modal")
        self.timeout = non_negative_float(scalars, "timeout", 300.0, "modal")
        self._check_token()

    def _check_token(self) -> None:
        """Refuse before anything is written when Modal has no token here (read from its config
        file or MODAL_TOKEN_ID, no network). An SDK without Modal's config module is not asked."""
        settings = getattr(getattr(self.sdk, "config", None), "config", None)
        if settings is None or not hasattr(settings, "get"):
            return
        try:
            token_id = settings.get("token_id")
        except Exception:  # an unreadable config: app.run() will say what is wrong
            return
        if not token_id:
            raise ProveError(
                "--backend modal: no Modal token on this machine (none in ~/.modal.toml or "
                "MODAL_TOKEN_ID)",
                suggestions=["modal token new"],
            )

    def build_image(self, job: Job) -> Any:
        table = self.section
        python = table.get("python_version") or f"{sys.version_info.major}.{sys.version_info.minor}"
        image = self.sdk.Image.debian_slim(python_version=python)
        if table.get("apt"):
            image = image.apt_install(*table["apt"])
        if table.get("run"):
            image = image.run_commands(*table["run"])
        image = image.pip_install(*_base_requirements(), *table.get("pip", []))
        if table.get("env"):
            image = image.env({str(k): str(v) for k, v in table["env"].items()})
        # Local files last: Modal mounts them at start instead of baking a layer per change.
        image = image.add_local_python_source("poisson_prove")
        return image.add_local_dir(job.spec_dir, remote_path=REMOTE_PROJECT)

    def function_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "serialized": True,
            "timeout": max(1, int(self.timeout)),
            "retries": self.sdk.Retries(
                max_retries=self.policy.worker_retries, backoff_coefficient=2.0, initial_delay=1.0
            ),
        }
        if self.concurrency:
            options["max_containers"] = self.concurrency
        for key in ("cpu", "memory", "gpu"):
            if self.settings.get(key) is not None:
                options[key] = self.settings[key]
        return options

    def execute(self, job: Job, tasks: Iterator[Task]) -> Iterator[dict[str, Any]]:
        policy, job = policy_for_job(self.policy, self.settings, job)
        remote_job = replace(job, spec_dir=REMOTE_PROJECT)
        app = self.sdk.App(self.app_name)
        function = app.function(image=self.build_image(job), **self.function_options())(run_task)
        kwargs = {"job": remote_job, "retries": policy.retries, "backoff_s": policy.backoff_s}

        def call_map(batch: Iterable[Task]) -> Iterable[Any]:
            return function.map(batch, kwargs=kwargs, order_outputs=False, return_exceptions=True)

        try:
            running = app.run()
            running.__enter__()
        except Exception as exc:
            raise ProveError(
                f"Modal did not start app {self.app_name!r}: {type(exc).__name__}: {exc}",
                suggestions=["modal token new", "modal app list"],
                exit_code=ProveExit.STOPPED,
            ) from exc
        try:
            yield from stream_mapped(call_map, job, tasks, policy)
        finally:
            running.__exit__(None, None, None)
