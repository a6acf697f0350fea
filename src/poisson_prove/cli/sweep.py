"""`poisson-prove sweep`: parse, show the plan, ask, run, say how it ended. The work is in
poisson_prove.sweep; the lines are in poisson_prove.render.plan."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from poisson_prove.cli.dashboard import refreshing
from poisson_prove.errors import EXIT_REFUSED, EXIT_STOPPED, ProveError

HELP = "run every condition of a sweep spec and store every episode"
DESCRIPTION = (
    "Run every condition of a sweep spec, N replicates each, on the local machine or a\n"
    "remote backend. The plan is printed first, with its cost estimate, and the sweep\n"
    "starts only after a yes."
)
EPILOG = """examples:
  poisson-prove sweep
  poisson-prove sweep --target my_agent:rollout_patched --pair-with latest --yes
  poisson-prove sweep other.toml --target my_agent:rollout --replicates 300
"""
REMOTE = (
    "remote backends (override the [modal] table; --infra-retries, --max-cost and --est-seconds "
    "also override [burla])"
)


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    from poisson_prove.backends import BACKENDS

    p = subparsers.add_parser(
        "sweep",
        parents=[parent],
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "spec",
        nargs="?",
        metavar="SPEC.toml",
        default=None,
        help="the sweep spec: the target, the axes, the replicates (default: ./prove.toml)",
    )
    p.add_argument(
        "--target",
        metavar="pkg.module:rollout",
        help="import path of the rollout function; wins over the spec's target (default: the spec's target)",
    )
    p.add_argument(
        "--budget",
        type=float,
        metavar="USD",
        help="size the run to the largest replicates this many dollars buy (backend estimate plus "
        "the backend table's cost_per_episode); refused when it cannot reach --max-mde",
    )
    p.add_argument(
        "--replicates",
        type=int,
        metavar="N",
        help="replicates per condition for this run, recorded in its manifest "
        "(default: the spec's replicates)",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where the rollouts run: local, modal or burla (burla is experimental; default: local)",
    )
    seeds = p.add_mutually_exclusive_group()
    seeds.add_argument(
        "--salt", metavar="HEX", help="the run salt seeds are derived from (default: a fresh one)"
    )
    seeds.add_argument(
        "--pair-with",
        metavar="RUN",
        help="inherit that run's salt, so the two runs share their seeds (default: none)",
    )
    seeds.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="RUN",
        help="continue that partial run where it stopped; alone, the latest partial "
        "run; written after SPEC.toml when a spec is given, so the spec is not read "
        "as the run (default: none)",
    )
    p.add_argument(
        "--stop-when-settled",
        action="store_true",
        help="with --pair-with: after each written batch, stop a condition once the sequential "
        "test has settled every failure outcome against the paired run, and the sweep when all "
        "have (default: run every planned replicate)",
    )
    p.add_argument("--name", metavar="TEXT", help="the name the new run goes by (default: computed)")
    p.add_argument(
        "--episode-timeout",
        type=float,
        metavar="S",
        help="seconds an episode may take before it is recorded as timed out (default: no limit)",
    )
    p.add_argument(
        "--max-rollouts",
        type=int,
        metavar="N",
        help="stop after N rollouts and leave the run partial (default: run them all)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        metavar="N",
        default=25_000,
        help="rows written to the store at a time, or fewer once they waited a second "
        "(default: 25000)",
    )
    p.add_argument(
        "--max-mde",
        type=float,
        metavar="FRACTION",
        default=None,  # 0.200, or a resumed run's own
        help="the largest minimum detectable effect you accept for this design (default: 0.200)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the plan and stop; nothing is run or written"
    )
    p.add_argument("--yes", action="store_true", help="skip the question after the plan")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the plan and the result as one JSON document instead of text",
    )
    remote = p.add_argument_group(REMOTE)
    remote.add_argument(
        "--concurrency", type=int, metavar="N", help="containers at once (default: the table's)"
    )
    remote.add_argument(
        "--infra-retries", type=int, metavar="N", help="retries per batch (default: the table's)"
    )
    remote.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="refuse before anything starts when the estimate is above this (default: no cap)",
    )
    remote.add_argument(
        "--est-seconds",
        type=float,
        metavar="S",
        help="seconds per episode, for the estimate (default: the table's)",
    )
    remote.add_argument("--app-name", metavar="NAME", help="the Modal app name (default: the table's)")
    remote.add_argument(
        "--image", metavar="SECTION", help="the [modal.SECTION] image table to build from (default: image)"
    )
    _shared_options_last(p)
    p.set_defaults(func=refreshing(run))  # a dashboard the store has is refreshed, however it ends


def _shared_options_last(parser: argparse.ArgumentParser) -> None:
    """List --store, --plain and --debug after the sweep's own options, as the docs show them."""
    shared = [a for a in parser._actions if a.dest in ("store", "plain", "debug")]
    for collection in (parser._actions, parser._optionals._group_actions):
        for action in shared:
            if action in collection:
                collection.remove(action)
        collection.extend(shared)


def _argv() -> list[str]:
    return list(sys.argv[1:])


def _with_option(argv: list[str], flag: str, value: str) -> list[str]:
    """The user's own command line with `flag value` set (replaced in place, else appended)."""
    out, i, replaced = [], 0, False
    while i < len(argv):
        token = argv[i]
        if token == flag and i + 1 < len(argv):
            out += [flag, value]
            i += 2
            replaced = True
            continue
        if token.startswith(flag + "="):
            out.append(f"{flag}={value}")
            replaced = True
        else:
            out.append(token)
        i += 1
    return out if replaced else [*out, flag, value]


def _command(argv: list[str]) -> str:
    return shlex.join(["poisson-prove", *argv])


class _Output:
    """Text lines to stdout, or (with --json) one document to the real stdout at the end."""

    def __init__(self, json_mode: bool) -> None:
        from poisson_prove.isolation import StdoutGuard

        self.json_mode = json_mode
        self.guard = StdoutGuard()
        self.stdout_tty = _isatty(sys.stdout)
        if json_mode:
            self.guard.activate()

    def line(self, text: str) -> None:
        if not self.json_mode:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def document(self, document: dict[str, Any]) -> None:
        self.guard.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")

    @property
    def ui_stream(self) -> Any:
        """Where the question and the progress bar go: stderr when stdout holds the JSON."""
        return sys.stderr if self.json_mode else sys.stdout


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _refused(
    out: _Output, err: ProveError, verdict: str = "refused", base: dict[str, Any] | None = None
) -> None:
    if out.json_mode:
        from poisson_prove.render.plan import JSON_SCHEMA

        document = dict(base or {"schema": JSON_SCHEMA})
        document["verdict"] = verdict
        document["sentence"] = err.message
        document["error"] = {"message": err.message, "next": list(err.suggestions)}
        out.document(document)


def run(args: argparse.Namespace) -> int:
    from poisson_prove.sweep import SweepRequest, prepare_sweep

    out = _Output(args.json)
    stdin_tty = _isatty(sys.stdin)
    overrides = {
        "concurrency": args.concurrency,
        "infra_retries": args.infra_retries,
        "max_cost": args.max_cost,
        "est_seconds": args.est_seconds,
        "app_name": args.app_name,
        "image": args.image,
    }
    request = SweepRequest(
        spec_path=args.spec,
        store=args.store,
        target=args.target,
        replicates=args.replicates,
        salt=args.salt,
        pair_with=args.pair_with,
        resume=args.resume,
        name=args.name,
        episode_timeout=args.episode_timeout,
        max_rollouts=args.max_rollouts,
        batch_size=args.batch_size,
        backend=args.backend,
        overrides=overrides,
        max_mde=args.max_mde,
        stop_when_settled=args.stop_when_settled,
    )
    try:
        # Under --episode-timeout the episodes import the target in their own child process, so
        # the check runs in one too: the target's import-time output then happens once.
        isolated = args.dry_run or args.episode_timeout is not None
        prepared = prepare_sweep(request, import_check="child" if isolated else "process")
    except ProveError as err:
        if out.json_mode and "called sys.exit" in err.message:
            err = _exit_at_import(err)
        _refused(out, err, "failed" if err.exit_code == EXIT_STOPPED else "refused")
        raise err from None
    if getattr(args, "budget", None) is None and prepared.spec.raw.get("budget") is not None:
        args.budget = float(prepared.spec.raw["budget"])  # the spec's budget; --budget wins
    if getattr(args, "budget", None) is not None:
        prepared = _budgeted(args, out, request, prepared)
    try:
        return _planned(args, out, prepared, stdin_tty)
    except (ProveError, KeyboardInterrupt):
        raise
    except Exception as exc:
        # The dispatcher logs it and exits 70; a --json caller still gets its one document.
        _refused(out, ProveError(f"unexpected failure: {type(exc).__name__}: {exc}"), "failed")
        raise


def _budgeted(args: argparse.Namespace, out: _Output, request: Any, prepared: Any) -> Any:
    """Re-plan at the replicates `--budget` buys, or refuse with the cheapest design that can."""
    import dataclasses

    from poisson_prove.backends.pricing import per_episode_usd
    from poisson_prove.budget import budget_design, per_episode_cost, refusal
    from poisson_prove.sweep import prepare_sweep

    plan = prepared.plan
    try:
        price = per_episode_cost(per_episode_usd(plan.backend, plan.settings), plan.settings)
        design = budget_design(
            args.budget, price, len(plan.cells), len(plan.failures), q=plan.q, max_mde=plan.max_mde
        )
        if not design.fits:
            raise refusal(design)
    except ProveError as err:
        _refused(out, err, "refused")
        raise err from None
    args.budget_design = design
    isolated = args.dry_run or args.episode_timeout is not None
    budgeted = dataclasses.replace(request, replicates=design.replicates, budget=design.to_dict())
    return prepare_sweep(budgeted, import_check="child" if isolated else "process")


def _exit_at_import(err: ProveError) -> ProveError:
    """--json and a target that called sys.exit while importing: exit 3, naming the errors log."""
    from poisson_prove.shared.cliapp import log_unexpected
    from poisson_prove.shared.cliapp import short_home as _short_home

    path = log_unexpected("poisson-prove", _argv())
    where = f" (details in {_short_home(path)})" if path else ""
    return ProveError(f"{err.message}{where}", suggestions=err.suggestions, exit_code=EXIT_STOPPED)


def _planned(args: argparse.Namespace, out: _Output, prepared: Any, stdin_tty: bool) -> int:
    from poisson_prove.plan import cost_error
    from poisson_prove.render.plan import plan_dict, plan_lines, resume_line
    from poisson_prove.sweep import underpowered_error

    document = plan_dict(prepared)
    for line in plan_lines(prepared):
        out.line(line)
    budgeted = getattr(args, "budget_design", None)
    if budgeted is not None:
        document["budget"] = budgeted.to_dict()
        out.line(budgeted.line())
    if not prepared.plan.passes:
        err = underpowered_error(prepared)
        argv = _argv()
        needed = err.suggestions[0].rsplit(" ", 1)[-1]
        suggestions = [_command(_with_option(argv, "--replicates", needed))]
        if len(err.suggestions) > 1:
            suggestions.append(
                _command(_with_option(argv, "--max-mde", err.suggestions[1].rsplit(" ", 1)[-1]))
            )
        err = ProveError(err.message, suggestions=suggestions)
        _refused(out, err, base=document)
        raise err
    refusal = cost_error(prepared.plan)
    if refusal is not None:
        _refused(out, refusal, base=document)
        raise refusal
    if args.dry_run:
        from poisson_prove.backends import check_backend

        try:
            check_backend(prepared.plan.backend, prepared.plan.settings)
        except ProveError as err:
            _refused(out, err, base=document)
            raise
        if out.json_mode:
            out.document(document)
        return 0
    if prepared.resume_run is not None:
        out.line(resume_line(prepared))
    if not args.yes:
        _confirm(out, stdin_tty, document)
    return _execute(args, out, prepared, document)


def _confirm(out: _Output, stdin_tty: bool, document: dict[str, Any]) -> None:
    if not (stdin_tty and out.stdout_tty):
        err = ProveError(
            "the plan needs a yes, and there is no terminal to ask on (piped or in CI)",
            suggestions=[_command([*_argv(), "--yes"])],
        )
        _refused(out, err, base=document)
        raise err
    stream = out.ui_stream
    stream.write("run it? [y/N] ")
    stream.flush()
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        err = ProveError("declined: nothing was run or written", exit_code=EXIT_REFUSED)
        _refused(out, err, base=document)
        raise err


def _execute(args: argparse.Namespace, out: _Output, prepared: Any, document: dict[str, Any]) -> int:
    from poisson_prove.render.plan import result_dict, result_lines
    from poisson_prove.shared.console import is_pretty
    from poisson_prove.shared.progress import make_progress
    from poisson_prove.sweep import execute_sweep

    ui = out.ui_stream
    pretty = is_pretty(args, ui)
    total = prepared.to_run if args.max_rollouts is None else min(prepared.to_run, args.max_rollouts)
    # Plain progress lines go to stderr, so a pipe's stdout holds only the documented lines.
    reporter = make_progress(ui if pretty else sys.stderr, total, pretty=pretty)
    try:
        result = execute_sweep(prepared, progress=reporter)
    except ProveError as err:
        _refused(out, err, base=document)
        raise
    finally:
        reporter.close()
    for line in result_lines(result):
        out.line(line)
    final = result_dict(document, result)
    err: ProveError | None = None
    if result.verdict == "interrupted":
        err = ProveError(
            f"interrupted: {result.done:,} of {result.planned:,} rollouts kept in run "
            f'"{result.name}" (partial)',
            suggestions=[_prefix(args) + "sweep --resume"],
            exit_code=result.exit_code,
        )
    elif result.verdict == "process_exit":
        final["verdict"] = "failed"
        err = ProveError(
            f"{result.process_exit}, which ends the sweep's own process, so the sweep stopped there: "
            f'{result.done:,} of {result.planned:,} rollouts kept in run "{result.name}" (partial), '
            "that episode stored as process_exit (--episode-timeout runs each episode in a process "
            "of its own, so one that ends it does not stop the sweep)",
            suggestions=[f"{_prefix(args)}sweep --resume --episode-timeout 600"],
            exit_code=EXIT_STOPPED,
        )
    elif out.json_mode and result.system_exits:
        from poisson_prove.shared.cliapp import cache_dir
        from poisson_prove.shared.cliapp import short_home as _short_home

        log = cache_dir("poisson-prove") / "errors.log"
        _log_system_exits(log, result)
        final["verdict"] = "failed"
        err = ProveError(
            f"the target called sys.exit in {result.system_exits:,} rollouts, stored as errors of kind "
            f"system_exit (details in {_short_home(log)})",
            suggestions=[f"{_prefix(args)}inspect {shlex.quote(result.name)}"],
            exit_code=EXIT_STOPPED,
        )
    elif result.verdict == "failed":
        err = ProveError(
            f"every rollout errored ({result.first_error})",
            suggestions=[f"{_prefix(args)}inspect {shlex.quote(result.name)}"],
            exit_code=EXIT_STOPPED,
        )
    elif result.verdict == "stopped":
        out.line(f"next: {_prefix(args)}sweep --resume")
    elif result.paired_with_name:
        out.line(f"next: {_prefix(args)}diff")
    if err is not None:
        final["error"] = {"message": err.message, "next": list(err.suggestions)}
    if out.json_mode:
        if result.verdict == "stopped":
            final["next"] = [_prefix(args) + "sweep --resume"]
        elif result.paired_with_name and err is None:
            final["next"] = [_prefix(args) + "diff"]
        out.document(final)
    if err is not None:
        raise err
    return result.exit_code


def _prefix(args: argparse.Namespace) -> str:
    """`poisson-prove ` plus the --store the user named, so a `next:` line runs as printed."""
    store = getattr(args, "store", None)
    return f"poisson-prove --store {shlex.quote(str(store))} " if store else "poisson-prove "


def _log_system_exits(path: Any, result: Any) -> None:
    import datetime as dt

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(
                f"--- {dt.datetime.now(dt.UTC).isoformat()} poisson-prove {' '.join(_argv())}\n"
                f'run "{result.name}" ({result.run_id}): {result.system_exits} rollouts called sys.exit; '
                f"first error: {result.first_error}\n"
            )
    except OSError:
        pass
