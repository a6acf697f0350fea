"""`poisson-prove sweep`: parse, show the plan, ask, run, say how it ended. The work is in
poisson_prove.sweep (sweep.command: the budget, the refusals, how it ended); the lines and the
JSON document are in poisson_prove.render.plan."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from poisson_prove.backends import check_backend
from poisson_prove.cli.dashboard import refreshing
from poisson_prove.cli.sweep_args import add_sweep_parser
from poisson_prove.episode.isolation import StdoutGuard
from poisson_prove.episode.target import TargetExitedError
from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.render.json import dumps
from prove_common.cliapp import log_system_exits, log_unexpected, short_home
from prove_common.console import is_pretty
from prove_common.progress import make_progress

if TYPE_CHECKING:
    from poisson_prove.sweep import PreparedSweep, SweepRequest


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser = add_sweep_parser(subparsers, parent)
    parser.set_defaults(func=refreshing(run))  # a dashboard the store has is refreshed, however it ends


def _argv() -> list[str]:
    return list(sys.argv[1:])


class _Output:
    """Text lines to stdout, or (with --json) one document to the real stdout at the end."""

    def __init__(self, json_mode: bool) -> None:
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
        self.guard.write(dumps(document))  # the one --json format (render.json)

    def refused(self, err: ProveError, verdict: str = "refused", base: dict[str, Any] | None = None) -> None:
        if self.json_mode:
            from poisson_prove.render.plan import refusal_dict  # numpy, filelock: not for --help

            self.document(refusal_dict(err, verdict, base))

    @property
    def ui_stream(self) -> TextIO:
        """Where the question and the progress bar go: stderr when stdout holds the JSON."""
        return sys.stderr if self.json_mode else sys.stdout


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _request(args: argparse.Namespace) -> SweepRequest:
    from poisson_prove.sweep import SweepRequest  # numpy, filelock: not for --help

    overrides = {
        "concurrency": args.concurrency,
        "infra_retries": args.infra_retries,
        "max_cost": args.max_cost,
        "est_seconds": args.est_seconds,
        "app_name": args.app_name,
        "image": args.image,
    }
    return SweepRequest(
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


def run(args: argparse.Namespace) -> int:
    from poisson_prove.render.plan import (  # numpy, filelock: not for --help
        plan_lines,
        planned_dict,
        resume_line,
    )
    from poisson_prove.sweep.command import plan_command, plan_refusal  # numpy, filelock: not for --help

    out = _Output(args.json)
    stdin_tty = _isatty(sys.stdin)
    try:
        planned = plan_command(_request(args), dry_run=args.dry_run, budget=getattr(args, "budget", None))
    except ProveError as err:
        if out.json_mode and isinstance(err, TargetExitedError):
            err = _exit_at_import(err)
        out.refused(err, "failed" if err.exit_code == ProveExit.STOPPED else "refused")
        raise err from None
    prepared = planned.prepared
    document = planned_dict(prepared, planned.budget)
    try:
        for line in plan_lines(prepared):
            out.line(line)
        if planned.budget is not None:
            out.line(planned.budget.line())
        refusal = plan_refusal(prepared, _argv())
        if refusal is not None:
            out.refused(refusal, base=document)
            raise refusal
        if args.dry_run:
            _check_backend(out, prepared, document)
            if out.json_mode:
                out.document(document)
            return 0
        if prepared.resume_run is not None:
            out.line(resume_line(prepared))
        if not args.yes:
            _confirm(out, stdin_tty, document)
        return _execute(args, out, prepared, document)
    except (ProveError, KeyboardInterrupt):
        raise
    except Exception as exc:
        # The dispatcher logs it and exits 70; a --json caller still gets its one document.
        out.refused(ProveError(f"unexpected failure: {type(exc).__name__}: {exc}"), "failed")
        raise


def _exit_at_import(err: ProveError) -> ProveError:
    """--json and a target that called sys.exit while importing: exit 3, naming the errors log."""
    path = log_unexpected("poisson-prove", _argv())
    where = f" (details in {short_home(path)})" if path else ""
    return ProveError(f"{err.message}{where}", suggestions=err.suggestions, exit_code=ProveExit.STOPPED)


def _check_backend(out: _Output, prepared: PreparedSweep, document: dict[str, Any]) -> None:
    try:
        check_backend(prepared.plan.backend, prepared.plan.settings)
    except ProveError as err:
        out.refused(err, base=document)
        raise


def _confirm(out: _Output, stdin_tty: bool, document: dict[str, Any]) -> None:
    from poisson_prove.sweep.command import command_line  # numpy, filelock: not for --help

    if not (stdin_tty and out.stdout_tty):
        err = ProveError(
            "the plan needs a yes, and there is no terminal to ask on (piped or in CI)",
            suggestions=[command_line([*_argv(), "--yes"])],
        )
        out.refused(err, base=document)
        raise err
    stream = out.ui_stream
    stream.write("run it? [y/N] ")
    stream.flush()
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        err = ProveError("declined: nothing was run or written", exit_code=ProveExit.REFUSED)
        out.refused(err, base=document)
        raise err


def _execute(
    args: argparse.Namespace, out: _Output, prepared: PreparedSweep, document: dict[str, Any]
) -> int:
    from poisson_prove.render.plan import ending_dict, result_lines  # numpy, filelock: not for --help
    from poisson_prove.sweep import command  # numpy, filelock: not for --help
    from poisson_prove.sweep.supervised import supervised_sweep  # numpy, filelock: not for --help

    ui = out.ui_stream
    pretty = is_pretty(args, ui)
    total = prepared.to_run if args.max_rollouts is None else min(prepared.to_run, args.max_rollouts)
    # Plain progress lines go to stderr, so a pipe's stdout holds only the documented lines.
    reporter = make_progress(ui if pretty else sys.stderr, total, pretty=pretty)
    try:
        # In a worker process when rollouts run in this one: however it ends, this one reports.
        result = supervised_sweep(prepared, progress=reporter, close_progress=reporter.close)
    except ProveError as err:
        out.refused(err, base=document)
        raise
    for line in result_lines(result):
        out.line(line)

    def logged() -> str:
        log = log_system_exits(
            "poisson-prove", _argv(), run_name=result.name, run_id=result.run_id,
            count=result.system_exits, first_error=result.first_error,
        )
        return short_home(log)

    prefix = command.command_prefix(getattr(args, "store", None))
    resume = command.resume_command(getattr(args, "spec", None), getattr(args, "target", None), result.name)
    ending = command.sweep_ending(
        result,
        prefix,
        log_system_exits=logged if out.json_mode else None,
        resume=resume,
    )
    if ending.next_line is not None:
        out.line(f"next: {ending.next_line}")
    if out.json_mode:
        out.document(ending_dict(document, result, ending))
    if ending.error is not None:
        raise ending.error
    return result.exit_code
