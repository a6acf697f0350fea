"""`snapshot init / show / list`: the pinned file read back independently, and every refusal."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.conftest import CLI, assert_clean_error, isolated_env
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import make_project, run_pipeline, server_env


@pytest.fixture
def pinned_project(tmp_path: Path, home: Path):
    project = tmp_path / "proj"
    make_project(project)
    with ModelServer() as server:
        env = server_env(server.openai_url)
        assert run_pipeline(project, isolated_env(home, env), "Where is my refund?").returncode == 0
        assert run_pipeline(project, isolated_env(home, env), "Second ticket").returncode == 0
        yield project, CLI("proveai", project, home), env


def stored_trace_ids(project: Path) -> list[str]:
    return stored_trace_ids_in(project / "proveai" / "traces")


def stored_trace_ids_in(folder: Path) -> list[str]:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return sorted(manifest, key=lambda tid: manifest[tid]["timestamp"])


def test_init_pins_hashes_that_an_independent_reader_recomputes(pinned_project) -> None:
    project, cli, env = pinned_project
    result = cli("snapshot", "init", env=env)
    assert result.returncode == 0, result.stderr
    newest = stored_trace_ids(project)[-1]
    assert result.stdout == f"Wrote snapshot 'latest' v1 — 3 agent(s) · trace {newest[:12]}…\n"
    raw = (project / "proveai" / "snapshots" / "latest.json").read_text(encoding="utf-8")
    data = json.loads(raw)
    # byte-stable layout: sorted keys, two-space indent, trailing newline
    assert raw == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert "timestamp" not in raw and "project_root" not in raw
    io = data["captures"][0]["io"]["draft"][0]
    canonical = json.dumps(io["output"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert io["output_hash"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    prompt = data["agents"]["draft"]["prompt"]
    assert prompt == "Draft a short, polite reply for this category."
    assert (
        data["agents"]["draft"]["prompt_hash"]
        == "sha256:" + hashlib.sha256(json.dumps(prompt).encode()).hexdigest()
    )
    assert data["agents"]["draft"]["parent_agent"] == "classify"
    assert data["captures"][0]["io"]["classify"][0]["inputs"] == {"ticket": "Second ticket"}


def test_trace_id_prefix_agents_and_names(pinned_project) -> None:
    project, cli, env = pinned_project
    older = stored_trace_ids(project)[0]
    result = cli("snapshot", "init", "weekly-goods", "--trace-id", older[:10], "--agent", "draft", env=env)
    assert result.returncode == 0, result.stderr
    assert "'weekly-goods' v1 — 1 agent(s)" in result.stdout
    data = json.loads((project / "proveai" / "snapshots" / "weekly-goods.json").read_text(encoding="utf-8"))
    assert list(data["agents"]) == ["draft"] and data["captures"][0]["trace_id"] == older

    import shutil

    shutil.copytree(project / "proveai" / "traces", project / "elsewhere")
    shutil.rmtree(project / "proveai" / "traces")
    other = cli("snapshot", "init", "other", "--traces", "elsewhere", env=env)
    assert other.returncode == 0, other.stderr
    assert f"trace {stored_trace_ids_in(project / 'elsewhere')[-1][:12]}…" in other.stdout
    shutil.copytree(project / "elsewhere", project / "proveai" / "traces")

    unknown_agent = cli("snapshot", "init", "x", "--agent", "drafter", env=env)
    assert_clean_error(unknown_agent, 2, "unknown agent 'drafter'", 'did you mean "draft"', "known agents:")
    unknown_trace = cli("snapshot", "init", "x", "--trace-id", "ffffffff", env=env)
    assert_clean_error(unknown_trace, 2, "no trace 'ffffffff'")
    bad_name = cli("snapshot", "init", "../evil", env=env)
    assert_clean_error(bad_name, 2, "not usable as a file name")
    assert not (project / "proveai" / "snapshots" / "x.json").exists()


def test_list_shows_malformed_and_show_explains(pinned_project) -> None:
    project, cli, env = pinned_project
    assert cli("snapshot", "init", env=env).returncode == 0
    snapshots = project / "proveai" / "snapshots"
    (snapshots / "broken.json").write_text("{not json", encoding="utf-8")
    tampered = json.loads((snapshots / "latest.json").read_text(encoding="utf-8"))
    tampered["captures"][0]["io"]["draft"][0]["output"] = "edited by hand"
    (snapshots / "tampered.json").write_text(json.dumps(tampered), encoding="utf-8")

    listing = cli("snapshot", "list", env=env)
    assert listing.returncode == 0, listing.stderr
    lines = {line.split()[0]: line for line in listing.stdout.splitlines()[1:]}
    assert "v1" in lines["latest"] and "ok" in lines["latest"]
    assert "malformed: " in lines["broken"] and "not valid JSON" in lines["broken"]
    assert "malformed: " in lines["tampered"] and "output_hash" in lines["tampered"]

    show = cli("snapshot", "show", env=env)
    assert show.returncode == 0
    assert "Invocation: python pipeline.py Second ticket" in show.stdout
    assert "draft" in show.stdout and "classify" in show.stdout
    broken = cli("snapshot", "show", "broken", env=env)
    assert_clean_error(broken, 2, "broken.json: not valid JSON (line 1")
    missing = cli("snapshot", "show", "nope", env=env)
    assert_clean_error(missing, 2, "no snapshot at")
    # verify refuses while a snapshot is malformed, naming it
    verify = cli("snapshot", "verify", env=env)
    assert_clean_error(verify, 2, "broken.json")


def test_nothing_to_pin_or_accept(tmp_path: Path, proveai_cli) -> None:
    empty = proveai_cli("snapshot", "init")
    assert_clean_error(empty, 2, "no traces in proveai/traces")
    assert proveai_cli("snapshot", "list").stdout.startswith("No snapshots in")
    none = proveai_cli("snapshot", "verify")
    assert_clean_error(none, 2, "no snapshots in")
    update = proveai_cli("snapshot", "update")
    assert_clean_error(update, 2, "no snapshot at")


def test_init_pins_a_trace_still_only_in_the_index_journal(pinned_project) -> None:
    # The capture index compacts its journal lazily: the newest trace may be listed only in
    # manifest.journal.jsonl, and its file may look older (a copy, a checkout).
    project, cli, env = pinned_project
    store = project / "proveai" / "traces"
    older, newest = stored_trace_ids(project)
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest.pop(newest)
    (store / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    line = json.dumps({"trace_id": newest, "entry": entry}) + "\n"
    (store / "manifest.journal.jsonl").write_text(line, encoding="utf-8")
    old_mtime = (store / f"{older}.json").stat().st_mtime
    os.utime(store / f"{newest}.json", (old_mtime - 60, old_mtime - 60))
    result = cli("snapshot", "init", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads((project / "proveai" / "snapshots" / "latest.json").read_text(encoding="utf-8"))
    assert data["captures"][0]["trace_id"] == newest
