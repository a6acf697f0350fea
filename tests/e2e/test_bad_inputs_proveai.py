"""Bad inputs to `proveai`, one row per case of the red-team reports (reliability.md's A01-A54
and reliability-2.md section 4's 67 proveai cases), each with its expected exit code: exactly one
`error:` line when non-zero, no traceback, and nothing written for a refusal. A module-level test
holds each group at its report's count.

reliability.md's A ids are its own where it describes the case; A37-A39, A49, A50 and A52-A54 are
named only by its group sentences, and were rebuilt from them. reliability-2.md gave its proveai
group as a count, not as cases, apart from TA06, PC01, PC15, SN07, SN12, SN28 and JC03 (its ids):
the other TA, PC, SN, JC and EG rows were rebuilt from its description (corrupt traces, manifest
and journal; malformed snapshots; bad names; the judge cache; the engine).

One driver process (bad_inputs_driver.py) imports the console script's entry point once and
forks a child per case; a few cases also run through the installed script itself.
"""

from __future__ import annotations

import collections
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import isolated_env, once_per_session, script_path
from tests.e2e.bad_inputs_kit import Case, check, json_edit, run_table, symlink, tree, write
from tests.proveai.model_server import ModelServer
from tests.proveai.snapshot.kit import make_project, pinned_project

pytestmark = pytest.mark.timeout(1200)  # the module's one driver run (every case) lands in its first test

SNAP = "proveai/snapshots/latest.json"
MANIFEST = "proveai/traces/manifest.json"
TRACE = "proveai/traces/0123456789abcdef0123456789abcdef.json"
JUDGE_CACHE = "proveai/snapshots/.judge_cache.json"
PRELOAD = ("proveai.snapshot", "proveai.replay", "proveai.store", "yaml", "numpy")


DEEP = "[" * 200_000 + "]" * 200_000


def wrong_types(manifest: dict[str, Any]) -> dict[str, Any]:
    for entry in manifest.values():
        entry.update(spans=5, agents=7, started_ns="x", timestamp=[1])
    return manifest


def hand_edited_output(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A pinned output edited by hand, its hash left as it was."""
    snapshot["captures"][0]["io"]["draft"][0]["output"] = "edited by hand"
    return snapshot


def invocation(change: dict[str, Any]) -> Any:
    return json_edit(SNAP, lambda d: {**d, "invocation": {**d["invocation"], **change}})


CASES: list[Case] = [
    # ---- reliability.md section 3: proveai (A01-A54) ---------------------------------------
    Case("A01-traces-missing", ("status", "--traces", "nowhere"), 2),
    Case("A02-traces-is-file", ("status", "--traces", "pyproject.toml"), 2),
    Case("A03-filter-no-equals", ("list", "--filter", "outcome"), 2),
    Case("A04-filter-unknown-key", ("list", "--filter", "colour=red"), 2),
    Case("A05-filter-bad-outcome", ("list", "--filter", "outcome=great"), 2),
    Case("A06-limit-zero", ("list", "--limit", "0"), 2),
    Case("A07-since-bad", ("list", "--filter", "since=yesterday"), 2),
    Case(
        "A08-corrupt-trace-list",
        ("list",),
        0,
        write("proveai/traces/0123456789abcdef0123456789abcdef.json", "{not json"),
        writes=True,
    ),
    Case("A09-corrupt-manifest", ("status",), 0, write(MANIFEST, "{torn"), writes=True),
    Case(
        "A10-corrupt-journal",
        ("status",),
        0,
        write("proveai/traces/manifest.journal.jsonl", '{"trace_id": "torn\n'),
        writes=True,
    ),
    Case("A11-manifest-deleted", ("status",), 0, write(MANIFEST, "[]"), writes=True),
    Case("A12-override-no-equals", ("run", "--override", "draft"), 2),
    Case("A13-override-missing-file", ("run", "--override", "draft=missing.md"), 2),
    Case("A14-override-unknown-agent", ("run", "--override", "drafter=pyproject.toml"), 2),
    Case("A15-report-is-folder", ("run", "--report", "proveai"), 2),
    Case("A16-report-under-file", ("run", "--report", "pyproject.toml/r.html"), 2),
    Case("A17-jobs-0", ("run", "--jobs", "0"), 2),
    Case("A18-jobs-1000", ("run", "--jobs", "1000"), 2),
    Case("A19-hold-at-unknown", ("run", "--hold-at", "0123456789abcdef"), 2),
    Case("A20-baseline-unknown", ("run", "--baseline", "nope"), 2),
    Case("A21-experiment-unknown", ("run", "--experiment", "nope"), 2),
    Case("A22-calibration-malformed", ("run",), 2, write("proveai.calibration.json", "{torn")),
    Case("A23-baseline-name-escape", ("baseline", "create", "../evil", "--filter", "outcome=good"), 2),
    Case("A24-experiment-empty", ("experiment", "new", "empty"), 2),
    Case("A25-ci-bad-provider", ("ci", "init", "--provider", "nowhere"), 2),
    Case("A26-analyze-deprecated", ("analyze",), 2),
    Case("A27-unknown-command", ("frobnicate",), 2),
    Case("A28-update-before-verify", ("snapshot", "update"), 2),
    Case("A29-diff-before-verify", ("snapshot", "diff"), 2),
    Case("A30-snapshot-garbage", ("snapshot", "verify"), 2, write(SNAP, "{garbage")),
    Case(
        "A31-snapshot-hash-mismatch",
        ("snapshot", "verify"),
        2,
        json_edit(SNAP, hand_edited_output),
    ),
    Case(
        "A32-snapshot-wrong-format",
        ("snapshot", "verify"),
        2,
        json_edit(SNAP, lambda d: {**d, "format": "other/9"}),
    ),
    Case("A33-snapshot-unknown-name", ("snapshot", "verify", "nope"), 2),
    Case("A34-snapshot-show-unknown", ("snapshot", "show", "nope"), 2),
    Case(
        "A35-snapshot-list-malformed",
        ("snapshot", "list"),
        0,
        write("proveai/snapshots/bad.json", "{garbage"),
    ),
    Case(
        "A36-verify-override-unknown-agent", ("snapshot", "verify", "--override", "drafter=pyproject.toml"), 2
    ),
    Case(
        "A40-baseline-yaml-unclosed",
        ("baseline", "show", "good"),
        2,
        write("proveai/baselines/good.yaml", ": : - [unclosed\n"),
    ),
    Case(
        "A41-baseline-yaml-python-tag",
        ("baseline", "show", "good"),
        2,
        write("proveai/baselines/good.yaml", '!!python/object/apply:os.system ["touch PWNED"]\n'),
    ),
    Case(
        "A42-run-baseline-python-tag",
        ("run", "--baseline", "good"),
        2,
        write("proveai/baselines/good.yaml", '!!python/object/apply:os.system ["touch PWNED"]\n'),
    ),
    Case(
        "A43-experiment-yaml-unclosed",
        ("experiment", "show", "x"),
        2,
        write("proveai/experiments/x.yaml", "a: [\n"),
    ),
    Case("A44-engine-bad-port", ("engine", "serve", "--port", "99999"), 2),
    Case("A45-engine-unknown-flag", ("engine", "serve", "--host", "0.0.0.0"), 2),
    Case("A46-snapshot-init-bad-name", ("snapshot", "init", "../evil"), 2),
    Case(
        "A47-verify-replicates-with-override",
        ("snapshot", "verify", "--replicates", "3", "--override", "draft=pyproject.toml"),
        2,
    ),
    Case(
        "A48-snapshot-deleted-pipeline",
        ("snapshot", "verify"),
        2,
        write("pipeline.py", "raise SystemExit(3)\n"),
        writes=True,
    ),
    Case(
        "A51-tampered-invocation",
        ("snapshot", "verify"),
        2,
        invocation({"python": "/bin/sh", "argv": ["-c", "touch PWNED"]}),
    ),
    Case("A37-corrupt-trace-run", ("run",), 0, write(TRACE, "{not json"), writes=True),
    Case("A38-empty-store", ("status", "--traces", "empty"), 0, write("empty/.keep", "")),
    Case("A39-baseline-show-unknown", ("baseline", "show", "nope"), 2),
    Case("A49-verify-timeout-0", ("snapshot", "verify", "--timeout", "0"), 2),
    Case("A50-update-unknown-name", ("snapshot", "update", "nope"), 2),
    Case("A52-experiment-show-unknown", ("experiment", "show", "nope"), 2),
    Case("A53-calibrate-traces-missing", ("calibrate", "--traces", "nowhere"), 2),
    Case("A54-engine-health-bad-endpoint", ("engine", "health", "--endpoint", "not a url"), 2),
    # ---- reliability-2.md section 4: proveai traces, snapshots, judge cache, CLI (67) ----------
    # TA06, PC01, PC15, SN07, SN12, SN28 and JC03 are the report's ids; it gave the rest of this
    # group as a count, so the other rows are rebuilt from its description.
    Case("TA01-trace-truncated", ("list",), 0, write(TRACE, '{"trace_id": "x"'), writes=True),
    Case("TA02-trace-empty", ("list",), 0, write(TRACE, ""), writes=True),
    Case("TA03-trace-is-list", ("list",), 0, write(TRACE, "[]"), writes=True),
    Case("TA04-manifest-is-list", ("status",), 0, write(MANIFEST, "[]"), writes=True),
    Case("TA05-trace-binary", ("list",), 0, write(TRACE, b"\x00\xff\xfe"), writes=True),
    Case("TA06-manifest-wrong-types", ("list",), 0, json_edit(MANIFEST, wrong_types), writes=True),
    Case(
        "TA07-journal-garbage",
        ("list",),
        0,
        write("proveai/traces/manifest.journal.jsonl", "x\n{\n"),
        writes=True,
    ),
    Case(
        "TA08-outcomes-garbage",
        ("status",),
        0,
        write("proveai/traces/outcomes.jsonl", "{garbage\n"),
        writes=True,
    ),
    Case("TA09-manifest-too-deep", ("status",), 0, write(MANIFEST, DEEP), writes=True),
    Case("TA10-traces-dev-null", ("status", "--traces", "/dev/null"), 2),
    Case("TA11-manifest-null", ("list",), 0, write(MANIFEST, "null"), writes=True),
    Case("PC01-run-override-dev-zero", ("run", "--override", "draft=/dev/zero"), 2),
    Case("PC02-override-agent-with-equals", ("run", "--override", "a=b=c"), 2),
    Case("PC03-status-filter-empty-value", ("status", "--filter", "outcome="), 2),
    Case("PC04-list-limit-negative", ("list", "--limit", "-1"), 2),
    Case("PC05-list-limit-text", ("list", "--limit", "abc"), 2),
    Case("PC06-since-impossible-date", ("list", "--filter", "since=2099-13-45"), 2),
    Case("PC07-jobs-text", ("run", "--jobs", "abc"), 2),
    Case("PC08-override-empty-path", ("run", "--override", "draft="), 2),
    Case("PC09-calibrate-unknown-flag", ("calibrate", "--frob"), 2),
    Case("PC10-snapshot-unknown-verb", ("snapshot", "frob"), 2),
    Case("PC11-baseline-unknown-verb", ("baseline", "frob"), 2),
    Case("PC12-validate-fix-retired", ("validate-fix",), 2),
    Case("PC13-ci-python-version-bad", ("ci", "init", "--python-version", "abc"), 2),
    Case(
        "PC14-experiment-name-escape", ("experiment", "new", "../x", "--override", "draft=pyproject.toml"), 2
    ),
    Case("PC15-traces-env-dev-null", ("status",), 2, env={"PROVEAI_TRACES_DIR": "/dev/null"}),
    Case("PC16-list-env-dev-null", ("list",), 2, env={"PROVEAI_TRACES_DIR": "/dev/null"}),
    Case(
        "PC17-traces-env-missing",
        ("status",),
        2,
        env={"PROVEAI_TRACES_DIR": "nowhere"},
        shows="no trace store at nowhere ($PROVEAI_TRACES_DIR)",
    ),
    Case("PC18-no-verb", (), 2, errors=0),
    Case("SN01-snapshot-is-list", ("snapshot", "verify"), 2, write(SNAP, "[]")),
    Case("SN02-snapshot-null", ("snapshot", "verify"), 2, write(SNAP, "null")),
    Case(
        "SN03-captures-missing",
        ("snapshot", "verify"),
        2,
        json_edit(SNAP, lambda d: {k: v for k, v in d.items() if k != "captures"}),
    ),
    Case(
        "SN04-captures-not-list", ("snapshot", "verify"), 2, json_edit(SNAP, lambda d: {**d, "captures": 5})
    ),
    Case(
        "SN05-format-missing",
        ("snapshot", "verify"),
        2,
        json_edit(SNAP, lambda d: {k: v for k, v in d.items() if k != "format"}),
    ),
    Case("SN06-rehashed-cwd-escape", ("snapshot", "verify"), 2, invocation({"cwd": "../../../../.."})),
    Case(
        "SN07-rehashed-invocation",
        ("snapshot", "verify"),
        2,
        invocation({"python": "/bin/sh", "argv": ["-c", "touch PWNED"]}),
    ),
    Case("SN08-snapshot-empty", ("snapshot", "verify"), 2, write(SNAP, "")),
    Case("SN09-snapshot-binary", ("snapshot", "verify"), 2, write(SNAP, b"\x00\xff\xfe")),
    Case("SN10-show-garbage", ("snapshot", "show"), 2, write(SNAP, "{garbage")),
    Case("SN11-diff-unknown-name", ("snapshot", "diff", "nope"), 2),
    Case("SN12-snapshot-too-deep", ("snapshot", "verify"), 2, write(SNAP, DEEP)),
    Case("SN13-list-too-deep", ("snapshot", "list"), 0, write(SNAP, DEEP)),
    Case("SN14-timeout-negative", ("snapshot", "verify", "--timeout", "-1"), 2),
    Case("SN15-timeout-text", ("snapshot", "verify", "--timeout", "abc"), 2),
    Case("SN16-init-name-empty", ("snapshot", "init", ""), 2),
    Case("SN17-init-name-dot", ("snapshot", "init", "."), 2),
    Case(
        "SN18-snapshot-is-folder", ("snapshot", "verify", "dir"), 2, write("proveai/snapshots/dir.json/x", "")
    ),
    Case(
        "SN19-snapshot-symlink-passwd",
        ("snapshot", "verify", "pw"),
        2,
        symlink("proveai/snapshots/pw.json", "/etc/passwd"),
    ),
    Case("SN20-judge-max-tokens-0", ("snapshot", "verify", "--judge-max-tokens", "0"), 2),
    Case("SN21-embedder-unknown", ("snapshot", "verify", "--embedder", "bogus"), 2),
    Case("SN22-override-folder", ("snapshot", "verify", "--override", "draft=proveai"), 2),
    Case("SN23-show-name-escape", ("snapshot", "show", "../x"), 2),
    Case(
        "SN24-snapshot-is-dev-zero",
        ("snapshot", "verify", "zero"),
        2,
        symlink("proveai/snapshots/zero.json", "/dev/zero"),
    ),
    Case("SN25-init-name-unicode-escape", ("snapshot", "init", "снимок/../x"), 2),
    Case("SN26-init-name-101", ("snapshot", "init", "a" * 101), 2),
    Case("SN27-verify-traces-missing", ("snapshot", "verify", "--traces", "nowhere"), 0, writes=True),
    Case("SN28-verify-override-dev-zero", ("snapshot", "verify", "--override", "draft=/dev/zero"), 2),
    Case(
        "SN29-verify-override-link-dev-zero",
        ("snapshot", "verify", "--override", "draft=z.md"),
        2,
        symlink("z.md", "/dev/zero"),
    ),
    Case("JC01-judge-cache-list", ("snapshot", "verify"), 0, write(JUDGE_CACHE, "[]"), writes=True),
    Case("JC02-judge-cache-garbage", ("snapshot", "verify"), 0, write(JUDGE_CACHE, "{garbage"), writes=True),
    Case(
        "JC03-judge-cache-strings",
        ("snapshot", "verify"),
        0,
        write(JUDGE_CACHE, '{"a|b|m": "a string"}'),
        writes=True,
    ),
    Case("JC04-judge-cache-too-deep", ("snapshot", "verify"), 0, write(JUDGE_CACHE, DEEP), writes=True),
    Case("JC05-judge-cache-binary", ("snapshot", "verify"), 0, write(JUDGE_CACHE, b"\x00\xff"), writes=True),
    Case("EG01-engine-port-text", ("engine", "serve", "--port", "abc"), 2),
    Case("EG02-engine-port-negative", ("engine", "serve", "--port", "-1"), 2),
    Case("EG03-engine-unknown-verb", ("engine", "frob"), 2),
    Case("EG04-engine-serve-unknown-flag", ("engine", "serve", "--host", "0.0.0.0"), 2),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """The project every case copies: the three-agent pipeline captured once and pinned as
    'latest', with the fake model server up while the cases run."""
    home = tmp_path_factory.mktemp("home")
    project = tmp_path_factory.mktemp("base") / "proj"
    make_project(project)
    with ModelServer() as server:
        _, env = pinned_project(project, server, home)
        yield project, home, env


@pytest.fixture(scope="module")
def table(
    base: tuple[Path, Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """Every case run once for the session (a worker that takes some of this module's tests
    reads the same results): {"work": the cases' folders, "results": id -> result}."""
    folder, home, env = base

    def make(work: Path) -> dict[str, Any]:
        results = run_table(CASES, folder, work, home, "proveai.cli:main", "proveai", env, PRELOAD)
        return {"work": str(work), "results": results}

    made: dict[str, Any] = once_per_session(tmp_path_factory, "bad-inputs-proveai-results", make)
    return made


@pytest.fixture(scope="module")
def results(table: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = table["results"]
    return found


def _param(case: Case) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


def test_every_case_id_is_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


# Each report's proveai group and its case count; an id's letters before its number name its group.
GROUPS = {
    "reliability.md: proveai": (("A",), 54),
    "reliability-2.md: proveai traces, snapshots, judge cache, CLI": (("TA", "PC", "SN", "JC", "EG"), 67),
}


def test_every_group_holds_as_many_rows_as_its_report_counts() -> None:
    """Coverage stays measured: every case of both reports is a row, in its report's group."""
    prefixes = [re.match(r"[A-Z]+", case.id) for case in CASES]
    groups = [next(g for g, (p, _) in GROUPS.items() if m and m.group() in p) for m in prefixes]
    assert dict(collections.Counter(groups)) == {name: count for name, (_, count) in GROUPS.items()}
    numbers = {m.group() for m in (re.match(r"[A-Z]+\d+", case.id) for case in CASES) if m}
    assert len(numbers) == len(CASES)  # one row per report id


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_bad_input(case: Case, results: dict[str, dict[str, Any]]) -> None:
    check(case, results[case.id])


@pytest.mark.parametrize(
    "case_id", ["SN28-verify-override-dev-zero", "PC15-traces-env-dev-null", "A40-baseline-yaml-unclosed"]
)
def test_the_driver_gives_what_the_installed_script_gives(
    case_id: str, base: tuple[Path, Path, dict[str, str]], results: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """The same case through the installed console script: the same exit code and output."""
    import shutil  # only this test copies the base once more

    case = next(c for c in CASES if c.id == case_id)
    folder, home, env = base
    shutil.copytree(folder, tmp_path / "case", symlinks=True)
    case.setup(tmp_path / "case")
    before = tree(tmp_path / "case")
    real = subprocess.run(
        [script_path("proveai"), *case.argv],
        cwd=tmp_path / "case",
        env=isolated_env(home, {**env, **case.env}),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    driven = results[case_id]
    assert (real.returncode, real.stderr, real.stdout) == (driven["code"], driven["stderr"], driven["stdout"])
    assert tree(tmp_path / "case") == before


def test_no_case_ran_a_tampered_command(table: dict[str, Any], tmp_path_factory: Any) -> None:
    """The python tags (A41/A42) and the tampered invocations (A51/SN07) ran nothing."""
    work = Path(table["work"])
    assert work.is_dir()
    for folder in (work, Path(str(tmp_path_factory.getbasetemp()))):
        assert not list(folder.rglob("PWNED"))
