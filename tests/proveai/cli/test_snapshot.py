"""`snapshot show / list` and the verbs with nothing to work on, through the console script
(`snapshot init`'s own tests are tests/proveai/snapshot/test_init.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import assert_clean_error
from tests.proveai.snapshot.kit import two_runs_project  # noqa: F401  (the `two_runs` fixture)


def test_list_shows_malformed_and_show_explains(two_runs) -> None:
    project, cli, env = two_runs
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
