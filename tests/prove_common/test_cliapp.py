"""The dispatcher both CLIs share: only the chosen verb's module is imported, every verb's
help line is the one its module gives, the common options, and the errors log."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import poisson_prove.cli
import proveai.cli
from prove_common.cliapp import (
    UsageParser,
    add_debug_option,
    add_plain_option,
    log_system_exits,
    path_value,
    short_home,
)
from tests.conftest import isolated_env

# Runs a CLI's main() in a fresh interpreter and prints which verb modules got imported.
IMPORTED = """
import contextlib, io, json, sys
cli = __import__(sys.argv[1], fromlist=["main"])
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        cli.main(sys.argv[2:])
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith(sys.argv[1] + ".") and m.count(".") == 2)))
"""


def _imported(tmp_path: Path, package: str, *argv: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED, package, *argv], capture_output=True, text=True,
        env=isolated_env(tmp_path), cwd=tmp_path, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [m for m in json.loads(done.stdout) if not m.rsplit(".", 1)[1].startswith("_")]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ((), []),
        (("--help",), []),
        (("bogus",), []),
        (("runs", "--help"), ["poisson_prove.cli.runs"]),
        (("--store", "x", "import", "--help"), ["poisson_prove.cli.import_logs"]),
        (("--plain", "inspect", "--help"), ["poisson_prove.cli.inspect"]),
    ],
)
def test_only_the_chosen_verb_is_imported(tmp_path: Path, argv: tuple[str, ...], expected: list[str]) -> None:
    assert _imported(tmp_path, "poisson_prove.cli", *argv) == expected


def test_proveai_imports_only_its_chosen_verb_too(tmp_path: Path) -> None:
    assert _imported(tmp_path, "proveai.cli", "--help") == []
    assert _imported(tmp_path, "proveai.cli", "status", "--help") == ["proveai.cli.status"]


@pytest.mark.parametrize("cli", [poisson_prove.cli, proveai.cli], ids=["poisson-prove", "proveai"])
def test_each_verbs_help_line_is_the_one_its_module_registers(cli: ModuleType) -> None:
    # the top-level --help lists VERBS without importing the verbs; it must read as before,
    # when every verb's module registered its own line
    verbs: dict[str, str] = cli.VERBS
    modules: dict[str, str] = getattr(cli, "MODULES", {})
    parent = argparse.ArgumentParser(add_help=False)
    for verb, line in verbs.items():
        sub = argparse.ArgumentParser().add_subparsers()
        module = importlib.import_module(f"{cli.__name__}.{modules.get(verb, verb.replace('-', '_'))}")
        module.register(sub, parent)
        assert [(a.dest, a.help) for a in sub._choices_actions] == [(verb, line)]


def test_plain_and_debug_options_before_and_after_the_verb() -> None:
    parser = argparse.ArgumentParser()
    add_plain_option(parser, False)
    add_debug_option(parser, False)
    sub = parser.add_subparsers(dest="verb")
    parent = argparse.ArgumentParser(add_help=False)
    add_plain_option(parent, True)
    add_debug_option(parent, True)
    sub.add_parser("status", parents=[parent])
    assert vars(parser.parse_args(["status"])) == {"plain": False, "debug": False, "verb": "status"}
    assert parser.parse_args(["--plain", "status"]).plain is True
    assert parser.parse_args(["status", "--plain"]).plain is True
    assert parser.parse_args(["--plain", "status", "--debug"]).debug is True
    assert "--no-color" not in parser.format_help()  # another switch, offered by the verbs that draw colour


def test_an_empty_path_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--store "" / --traces "": `Path("")` is the working directory, so an empty or blank path
    is refused (exit 2, one `error:` line naming the option, `next:` its help), never read as `.`."""
    parser = UsageParser(prog="tool")
    parser.add_argument("--store", type=path_value)
    assert parser.parse_args(["--store", "runs"]).store == "runs"
    assert parser.parse_args(["--store", " spaced "]).store == " spaced "  # a real name, kept as typed
    for given in ("", " ", "\t"):
        with pytest.raises(SystemExit) as stopped:
            parser.parse_args(["--store", given])
        assert stopped.value.code == 2
        assert capsys.readouterr().err.splitlines() == [
            f"error: argument --store: expects a path, got {given!r}: an empty path names no folder",
            "next: tool --help",
        ]


def test_log_system_exits_appends_one_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = log_system_exits(
        "poisson-prove",
        ["sweep", "--json"],
        run_name="r1",
        run_id="20260101-abc",
        count=3,
        first_error="exit 2",
    )
    assert path == tmp_path / "cache" / "poisson-prove" / "errors.log"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("--- ") and lines[0].endswith(" poisson-prove sweep --json")
    assert lines[1] == 'run "r1" (20260101-abc): 3 rollouts called sys.exit; first error: exit 2'


def test_log_system_exits_names_the_log_even_when_it_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    path = log_system_exits("poisson-prove", [], run_name="r", run_id="i", count=1, first_error=None)
    assert path == blocker / "poisson-prove" / "errors.log"
    assert not path.exists()


def test_short_home() -> None:
    home = os.path.expanduser("~")
    assert short_home(Path(home) / ".cache" / "x") == "~/.cache/x"
    assert short_home(Path("/elsewhere/x")) == "/elsewhere/x"


APP = """
import sys
from prove_common.cliapp import add_debug_option, run_app
sys.exit(run_app(
    prog="toy", description="a toy", version="1", verbs={"good": "works", "broken": "cannot load"},
    package="toyverbs", argv=None, common=add_debug_option,
))
"""
GOOD = """
def register(subparsers, parent):
    subparsers.add_parser("good", parents=[parent], help="works").set_defaults(func=run)

def run(args):
    print("good ran")
    return 0
"""


def test_a_verb_that_cannot_load_is_one_error_line_and_a_logged_traceback(tmp_path: Path) -> None:
    package = tmp_path / "toyverbs"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "good.py").write_text(GOOD)
    (package / "broken.py").write_text("import a_module_that_is_not_installed\n")
    env = isolated_env(tmp_path, {"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})

    def toy(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", APP, *argv], capture_output=True, text=True, env=env, cwd=tmp_path,
            timeout=60,
        )

    good = toy("good")
    assert (good.returncode, good.stdout, good.stderr) == (0, "good ran\n", "")
    broken = toy("broken")
    assert broken.returncode == 70
    assert broken.stdout == ""
    lines = broken.stderr.splitlines()
    assert lines[0].startswith("error: unexpected failure: ModuleNotFoundError:"), broken.stderr
    assert lines[1] == "next: toy broken --debug ... to see the traceback; please report it"
    assert len(lines) == 2
    log = (tmp_path / ".cache" / "toy" / "errors.log").read_text(encoding="utf-8")
    assert "a_module_that_is_not_installed" in log and "Traceback" in log
    assert "Traceback" in toy("broken", "--debug").stderr


VERSIONED_APP = """
import sys
from prove_common.cliapp import add_debug_option, run_app

def version():
    print("version read", file=sys.stderr)
    return "1.2.3"

sys.exit(run_app(
    prog="toy", description="a toy", version=version, verbs={"good": "works"},
    package="toyverbs", argv=None, common=add_debug_option,
))
"""


def test_a_version_given_as_a_function_is_read_only_for_version(tmp_path: Path) -> None:
    # the installed metadata costs ~20 ms: --help and every verb must not pay it
    def toy(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", VERSIONED_APP, *argv], capture_output=True, text=True,
            env=isolated_env(tmp_path), cwd=tmp_path, timeout=60,
        )

    asked = toy("--version")
    assert (asked.returncode, asked.stdout, asked.stderr) == (0, "toy 1.2.3\n", "version read\n")
    helped = toy("--help")
    assert helped.returncode == 0 and helped.stderr == ""
    assert "--version" in helped.stdout and "show program's version number and exit" in helped.stdout


# Runs a CLI's main() once per argv (a JSON list on stdin): exit code and stderr for each.
EACH_ARGV = """
import contextlib, io, json, sys
cli = __import__(sys.argv[1], fromlist=["main"])
results = []
for argv in json.load(sys.stdin):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
    results.append([argv, code, err.getvalue()])
print(json.dumps(results))
"""


def _command_paths(cli: ModuleType) -> list[list[str]]:
    """Every verb of the CLI, and every subcommand under a verb (`engine serve`, `snapshot verify`)."""
    modules: dict[str, str] = getattr(cli, "MODULES", {})
    paths: list[list[str]] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        paths.append(path)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, [*path, name])

    for verb in cli.VERBS:
        module = importlib.import_module(f"{cli.__name__}.{modules.get(verb, verb.replace('-', '_'))}")
        sub = argparse.ArgumentParser().add_subparsers(parser_class=argparse.ArgumentParser)
        module.register(sub, argparse.ArgumentParser(add_help=False))
        walk(sub.choices[verb], [verb])
    return paths


@pytest.mark.parametrize(
    ("cli", "prog"),
    [(poisson_prove.cli, "poisson-prove"), (proveai.cli, "proveai")],
    ids=["prove", "proveai"],
)
def test_an_unknown_option_names_the_help_of_the_command_it_was_given_to(
    cli: ModuleType, prog: str, tmp_path: Path
) -> None:
    """`proveai engine serve --host 0.0.0.0` says `next: proveai engine serve --help`, not the
    top-level help: for every command and subcommand of both CLIs, and before the verb the top."""
    paths = _command_paths(cli)
    assert len(paths) > len(cli.VERBS)  # the nested subcommands were found too
    argvs = [[*path, "--no-such-option"] for path in paths] + [["--no-such-option"]]
    done = subprocess.run(
        [sys.executable, "-c", EACH_ARGV, cli.__name__], input=json.dumps(argvs), capture_output=True,
        text=True, env=isolated_env(tmp_path), cwd=tmp_path, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for argv, code, stderr in json.loads(done.stdout):
        path = argv[:-1] if argv[0] != "--no-such-option" else []
        if "was retired" in stderr:  # analyze, validate-fix: any arguments, one line naming what replaced it
            assert code == 2 and stderr.count("error: ") == 1, (argv, stderr)
            continue
        lines = stderr.splitlines()
        assert code == 2, (argv, stderr)
        assert [line for line in lines if line.startswith("error: ")] == lines[:1], (argv, stderr)
        assert lines[-1] == f"next: {' '.join([prog, *path])} --help", (argv, stderr)


# Runs a CLI's main() twice, then reports at exit (this handler, registered first, runs last)
# how many objects the collector had frozen and how many exit functions were registered.
AT_EXIT = """
import atexit, contextlib, gc, io, sys
atexit.register(lambda: print(gc.get_freeze_count() > 0, atexit._ncallbacks()))
cli = __import__(sys.argv[1], fromlist=["main"])
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    cli.main(["--help"])
    cli.main(["--help"])
"""


@pytest.mark.parametrize("package", ["poisson_prove.cli", "proveai.cli"])
def test_the_exit_does_not_collect_what_the_command_imported(tmp_path: Path, package: str) -> None:
    """The interpreter's exit collections are skipped (everything frozen first), registered
    once however often main() runs: they cost a short command like `diff` 60-80 ms."""
    done = subprocess.run(
        [sys.executable, "-c", AT_EXIT, package], capture_output=True, text=True,
        env=isolated_env(tmp_path), cwd=tmp_path, timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    frozen, registered = done.stdout.split()
    assert frozen == "True"
    assert registered == "2"  # this test's and ours, once
