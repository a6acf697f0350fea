"""The command-line machinery both CLIs share: verb registry, usage errors, error rendering,
the errors log.

Library code raises a UserError (ProveError, ProveAIError); this module turns it into one
`error:` line, `next:` lines and the documented exit code. Anything unexpected goes to the
errors log with its traceback (and to stderr too with --debug) and exits with EXIT_UNEXPECTED,
never a code with a meaning.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import gc
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from prove_common.errors import INTERRUPTED_EXIT as EXIT_INTERRUPTED
from prove_common.errors import UNEXPECTED_EXIT as EXIT_UNEXPECTED
from prove_common.errors import USAGE_EXIT as EXIT_USAGE
from prove_common.errors import UserError
from prove_common.jsonio import utc_now


def cache_dir(app: str) -> Path:
    """`$XDG_CACHE_HOME/<app>` when set, else `~/.cache/<app>`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / app


_EXTRAS_PROG = "_usage_extras_prog"  # the namespace attribute naming the innermost parser left extras


class UsageParser(argparse.ArgumentParser):
    """argparse whose usage errors are one `error:` line, a `next:` line naming the help of the
    (sub)command that was given the wrong argument, and exit 2."""

    def error(self, message: str, prog: str | None = None) -> NoReturn:
        sys.stderr.write(f"error: {message}\n")
        sys.stderr.write(f"next: {prog or self.prog} --help\n")
        sys.exit(EXIT_USAGE)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        # A subcommand parses first and its attributes are copied up: the innermost one that left
        # arguments unread is the one whose help the user needs.
        if extras and not hasattr(parsed, _EXTRAS_PROG):
            setattr(parsed, _EXTRAS_PROG, self.prog)
        return parsed, extras

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        prog = getattr(parsed, _EXTRAS_PROG, None)
        if hasattr(parsed, _EXTRAS_PROG):
            delattr(parsed, _EXTRAS_PROG)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}", prog)
        return parsed


def print_error(err: UserError, stream=None) -> None:
    stream = stream or sys.stderr
    stream.write(f"error: {err.message}\n")
    for suggestion in err.suggestions:
        stream.write(f"next: {suggestion}\n")
    stream.flush()


def errors_log(app: str) -> Path:
    """Where an app's unexpected failures are written: `<cache dir>/errors.log`."""
    return cache_dir(app) / "errors.log"


def _append_to_errors_log(app: str, argv: Sequence[str], text: str) -> Path | None:
    """Append one entry (a `---` line naming the time and the command, then `text`)."""
    path = errors_log(app)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            # isoformat() (microseconds, +00:00), not utc_iso: the log's lines keep the form they have
            handle.write(f"--- {utc_now().isoformat()} {app} {' '.join(argv)}\n")
            handle.write(text)
        return path
    except OSError:
        return None


def log_unexpected(app: str, argv: Sequence[str]) -> Path | None:
    """Append the current exception's traceback to the app's errors.log; return its path."""
    return _append_to_errors_log(app, argv, traceback.format_exc())


def log_system_exits(
    app: str,
    argv: Sequence[str],
    *,
    run_name: str,
    run_id: str,
    count: int,
    first_error: str | None,
) -> Path:
    """Note in the app's errors.log that `count` rollouts of a run called sys.exit (they are
    stored as errors, so there is no traceback to keep); return the log's path, which the
    error line names even when the log could not be written."""
    _append_to_errors_log(
        app,
        argv,
        f'run "{run_name}" ({run_id}): {count} rollouts called sys.exit; first error: {first_error}\n',
    )
    return errors_log(app)


def short_home(path: Path) -> str:
    """`path` with the home folder written `~`, as error lines name files."""
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home):] if text.startswith(home + os.sep) else text


def one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    """Python warnings (ours, a library's, the target's) as one `warning:` line, without the
    source path and code line Python's default format adds."""
    text = (str(message).strip().splitlines() or [category.__name__])[0]
    stream = file if hasattr(file, "write") else sys.stderr
    try:
        stream.write(f"warning: {text}\n")
    except (OSError, ValueError):
        pass


Register = Callable[[argparse._SubParsersAction, argparse.ArgumentParser], None]


def path_value(text: str) -> str:
    """An argparse `type` for a folder or file option (--store, --traces): an empty or blank
    path is a usage error, never read as the working directory (`Path("")` is `.`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expects a path, got {text!r}: an empty path names no folder")
    return text


def add_plain_option(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """`--plain`: plain text, as a pipe gets it, on a terminal too (read it with
    `console.is_pretty`). It never means "no colour": that is `--no-color`, where a command
    offers it (read by `console.wants_color`)."""
    default = argparse.SUPPRESS if suppress else False
    parser.add_argument(
        "--plain",
        action="store_true",
        default=default,
        help="print plain text, as a pipe gets it, on a terminal too",
    )


def add_debug_option(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """`--debug`: also print the traceback of an unexpected failure."""
    parser.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="also print the traceback of an unexpected failure",
    )


class _VersionAction(argparse.Action):
    """`--version`: prints "<prog> <version>" and exits 0, as argparse's own, but reads the version
    only when asked (a callable: the installed metadata costs ~20 ms, which --help need not pay)."""

    def __init__(self, option_strings: Sequence[str], dest: str, version: Callable[[], str]) -> None:
        super().__init__(
            option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0,
            help="show program's version number and exit",
        )
        self.version = version

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        sys.stdout.write(f"{parser.prog} {self.version()}\n")
        parser.exit()


def _build_parser(
    *,
    prog: str,
    description: str,
    version: str | Callable[[], str],
    verbs: Mapping[str, str],
    common: Callable[[argparse.ArgumentParser, bool], None],
    chosen: Register | None = None,
    chosen_verb: str | None = None,
) -> argparse.ArgumentParser:
    """The top-level parser: every verb listed with its help line, only `chosen_verb` given
    its real options (by its module's `register`)."""
    parser = UsageParser(prog=prog, description=description)
    parser.add_argument(
        "--version",
        action=_VersionAction,
        version=version if callable(version) else lambda: version,  # type: ignore[arg-type]
    )
    common(parser, False)
    parent = UsageParser(add_help=False)
    common(parent, True)
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND", parser_class=UsageParser)
    for verb, help_line in verbs.items():
        if verb == chosen_verb and chosen is not None:
            chosen(sub, parent)
        else:
            # a stand-in: named in --help and in "invalid choice", its options unread
            sub.add_parser(verb, help=help_line, add_help=False)
    return parser


def run_app(
    *,
    prog: str,
    description: str,
    version: str | Callable[[], str],
    verbs: Mapping[str, str],
    package: str,
    argv: Sequence[str] | None,
    common: Callable[[argparse.ArgumentParser, bool], None],
    unexpected_exit: int = EXIT_UNEXPECTED,
    modules: Mapping[str, str] | None = None,
) -> int:
    """Parse `argv`, run the verb's `run(args) -> int`, render errors.

    Each verb lives in `<package>.<verb>` (verb names with '-' use '_') and exposes
    `register(subparsers, parent)` (`modules` names another module for a verb that is a
    Python keyword, such as `import`); `common(parser, suppress)` adds the options every verb
    shares (suppress=True on the verb level so the global value is kept when not repeated).

    Only the chosen verb's module is imported (so a verb module imports the library at its
    top, and `--help` stays fast): a first pass, with every verb a stand-in, finds which verb
    argparse would pick; the second builds that one verb for real and parses `argv` in full,
    so errors, help and option placement read exactly as with every verb built. The top-level
    --help lists each verb with its line from `verbs`.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    _exit_without_collecting()
    build = functools.partial(
        _build_parser, prog=prog, description=description, version=version, verbs=verbs, common=common
    )
    scout = build()
    chosen_verb = getattr(scout.parse_known_args(argv)[0], "verb", None)
    warnings.showwarning = one_line_warning
    register: Register | None = None
    if chosen_verb:
        module = (modules or {}).get(chosen_verb, chosen_verb.replace("-", "_"))
        try:
            register = importlib.import_module(f"{package}.{module}").register
        except Exception as exc:  # a verb that cannot even load (a broken install): a bug
            return _unexpected(prog, argv, chosen_verb, exc, "--debug" in argv, unexpected_exit)
    parser = build(chosen=register, chosen_verb=chosen_verb)
    args = parser.parse_args(argv)
    if not getattr(args, "verb", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except UserError as err:
        if getattr(args, "debug", False) and err.__cause__ is not None:
            traceback.print_exception(err.__cause__, file=sys.stderr)
        print_error(err)
        return err.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as exc:
        return _unexpected(prog, argv, args.verb, exc, getattr(args, "debug", False), unexpected_exit)


@functools.cache  # registered once per process, however often `run_app` runs (tests call it in-process)
def _exit_without_collecting() -> None:
    """At the interpreter's exit, move every object to the collector's permanent generation.

    The exit's own collections walk every object that NumPy, SciPy and pyarrow created at
    import (60-80 ms of a `diff` that takes ~0.4 s, BENCHMARKS.md); the memory goes back to the
    system with the process anyway. atexit runs after the verb's threads have been joined and
    before those collections; files are closed by the code that writes them, not by the
    collector.
    """
    atexit.register(gc.freeze)


def _unexpected(
    prog: str, argv: Sequence[str], verb: str, exc: Exception, debug: bool, exit_code: int
) -> int:
    """A bug: the traceback to the errors log (and stderr with --debug), one `error:` line."""
    log_path = log_unexpected(prog, argv)
    if debug:
        traceback.print_exc()
    where = f" (details in {short_home(log_path)})" if log_path else ""
    sys.stderr.write(f"error: unexpected failure: {type(exc).__name__}: {exc}{where}\n")
    sys.stderr.write(f"next: {prog} {verb} --debug ... to see the traceback; please report it\n")
    return exit_code
