"""The bad-input tables' machinery: a case, its folder prepared from a shared base, one driver
subprocess running every case of a table (tests/e2e/bad_inputs_driver.py), and what a clean
result is (the exit code, exactly one `error:` line when non-zero, no traceback, nothing
written for a refusal)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import isolated_env

DRIVER = Path(__file__).with_name("bad_inputs_driver.py")
ROOT = Path(__file__).resolve().parents[2]

Setup = Callable[[Path], None]


def _nothing(_: Path) -> None:
    return None


@dataclass(frozen=True)
class Case:
    """One bad input: its report id, the command line after the program name, how its folder
    is damaged first, the exit code it must give, and whether a refusal may write (False: the
    folder's files are byte-identical afterwards)."""

    id: str
    argv: tuple[str, ...]
    code: int
    setup: Setup = _nothing
    writes: bool = False
    env: dict[str, str] = field(default_factory=dict)
    xfail: str | None = None  # the reason, for a case still failing (strict: it must fail)
    run: bool = True  # False: a case whose failure is unbounded (a fork bomb) is not run
    errors: int = 1  # `error:` lines when non-zero (0: no command at all prints the help instead)
    shows: str = ""  # a fragment stdout or stderr must hold (what the docs promise the case prints)


def tree(folder: Path) -> dict[str, str]:
    """Every regular file under `folder` (by relative path) with its SHA-256."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def run_table(
    cases: list[Case],
    base: Path,
    work: Path,
    home: Path,
    entry: str,
    prog: str,
    env: dict[str, str],
    preload: tuple[str, ...] = (),
    resolve: Callable[[Path, str], str] = lambda folder, token: token,
) -> dict[str, dict[str, Any]]:
    """Prepare each case's folder (a copy of `base`, then its setup), run them all through one
    driver process, and return id -> {"code", "stdout", "stderr", "before", "after"}.
    `resolve(folder, token)` rewrites each argv token once the folder is ready (a run's id).

    Rows of two reports that are the same case (the same command line and environment on the
    untouched base, as reliability.md's R20 and reliability-2.md's RO35) run once: the later
    row is given the first one's result, which is what running it again would give."""
    prepared = []
    befores: dict[str, dict[str, str]] = {}
    first_of: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], str] = {}
    same_as: dict[str, str] = {}
    for case in cases:
        if not case.run:
            continue
        if case.setup is _nothing:
            key = (case.argv, tuple(sorted(case.env.items())))
            if key in first_of:
                same_as[case.id] = first_of[key]
                continue
            first_of[key] = case.id
        folder = work / case.id
        shutil.copytree(base, folder, symlinks=True)
        case.setup(folder)
        befores[case.id] = tree(folder)
        argv = [resolve(folder, token) for token in case.argv]
        prepared.append({"id": case.id, "argv": argv, "cwd": str(folder), "env": case.env})
    process = subprocess.run(
        [sys.executable, str(DRIVER), entry, prog, ",".join(preload)],
        input=json.dumps(prepared),
        capture_output=True,
        text=True,
        env=isolated_env(home, env),
        cwd=ROOT,
        timeout=60 * 20,
    )
    assert process.returncode == 0, process.stderr
    results: dict[str, dict[str, Any]] = {}
    for line in process.stdout.splitlines():
        result = json.loads(line)
        result["before"] = befores[result["id"]]
        result["after"] = tree(work / result["id"])
        results[result["id"]] = result
    for case_id, first in same_as.items():
        results[case_id] = {**results[first], "id": case_id}
    return results


def check(case: Case, result: dict[str, Any]) -> None:
    """The case's result is clean: its exit code, one `error:` line when non-zero, no traceback,
    and nothing written for a refusal."""
    shown = (
        f"{case.id}: exit {result['code']}\n"
        f"stdout: {result['stdout'][-2000:]}\nstderr: {result['stderr'][-2000:]}"
    )
    assert not result["timed_out"], shown
    assert result["code"] == case.code, shown
    assert "Traceback" not in result["stderr"] and "Traceback" not in result["stdout"], shown
    if case.code != 0:
        errors = [line for line in result["stderr"].splitlines() if line.startswith("error: ")]
        assert len(errors) == case.errors, shown
    if case.shows:
        assert case.shows in result["stdout"] + result["stderr"], (case.shows, shown)
    if not case.writes:
        assert result["after"] == result["before"], (case.id, set(result["after"]) ^ set(result["before"]))


def edit(relative: str, old: str, new: str) -> Setup:
    def setup(folder: Path) -> None:
        path = folder / relative
        text = path.read_text(encoding="utf-8")
        assert old in text, (relative, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return setup


def write(relative: str, text: str | bytes) -> Setup:
    def setup(folder: Path) -> None:
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")

    return setup


def fifo(relative: str) -> Setup:
    def setup(folder: Path) -> None:
        os.mkfifo(folder / relative)

    return setup


def symlink(relative: str, to: str) -> Setup:
    def setup(folder: Path) -> None:
        (folder / relative).symlink_to(to)

    return setup


def both(*setups: Setup) -> Setup:
    def setup(folder: Path) -> None:
        for one in setups:
            one(folder)

    return setup


def json_edit(pattern: str, change: Callable[[Any], Any]) -> Setup:
    """Rewrite the JSON file(s) matching `pattern` under the folder with `change(document)`."""

    def setup(folder: Path) -> None:
        paths = sorted(folder.glob(pattern))
        assert paths, pattern
        for path in paths:
            path.write_text(
                json.dumps(change(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8"
            )

    return setup
