"""A store of three traces captured for real, routed to the fake model server, for the replay verbs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.proveai.model_server import ModelServer
from tests.proveai.replay.pipeline import run_pipeline

TICKETS = ("My order arrived broken", "Refund please", "Where is my parcel?")


@pytest.fixture(name="store")  # tests ask for `store`
def replay_store(workdir: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Three traces captured for real into workdir/proveai/traces; the env that routes models."""
    from proveai.providers import reset_providers

    env = {
        "PROVEAI_PROVIDER_PATTERN": "gpt-*,claude-*",
        "PROVEAI_PROVIDER_BASE_URL": model_server.openai_url,
        "PROVEAI_CACHE_DIR": str(workdir.parent / "cache"),
        "PROVEAI_PROVIDER_BACKOFF": "0.01",  # a failing endpoint is retried without sleeping
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    reset_providers()
    for ticket in TICKETS:
        run_pipeline(ticket, root=workdir / "proveai" / "traces")
    (workdir / "prompts").mkdir()
    (workdir / "prompts" / "qa_v2.md").write_text("Check the reply. Be strict.", encoding="utf-8")
    return env


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _run_dir(workdir: Path) -> Path:
    (run_dir,) = (workdir / "proveai" / "runs").iterdir()
    return run_dir
