"""`poisson-prove dashboard [--serve]`: the store's runs and comparisons as one HTML page."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

HELP = "write (or serve) one HTML page of the store's runs and comparisons"
DESCRIPTION = (
    "Write <store>/dashboard.html: every run, each run's rates per condition with Wilson "
    "intervals, cumulative incidence curves, failed episodes' steps and spans, and every "
    "comparison printed (plus the latest pair) as a forest plot. Self-contained: no script, "
    "no network. Once it exists, sweep, diff and check refresh it. --serve serves it on "
    "127.0.0.1 and rebuilds it as runs land."
)


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    from poisson_prove.dashboard import DEFAULT_PLOTS

    parser = subparsers.add_parser("dashboard", parents=[parent], help=HELP, description=DESCRIPTION)
    parser.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 until Ctrl-C")
    parser.add_argument("--port", type=int, default=0, help="the port to serve on (default: a free one)")
    parser.add_argument(
        "--plots", type=int, default=DEFAULT_PLOTS, metavar="N",
        help=f"draw curves and failed episodes for the N most recent runs (default {DEFAULT_PLOTS})",
    )
    parser.add_argument(
        "--refresh", type=int, default=5, metavar="SECONDS",
        help="with --serve: how often the open page reloads itself (default 5)",
    )
    parser.set_defaults(func=run)


def _log() -> Path:
    from poisson_prove.cli._compared import log_path

    return log_path()


def run(args: argparse.Namespace) -> int:
    from poisson_prove.dashboard import write_dashboard
    from poisson_prove.errors import EXIT_USAGE, ProveError

    if args.plots < 0 or args.refresh < 1 or not 0 <= args.port <= 65535:
        raise ProveError(
            "--plots must be 0 or more, --refresh 1 or more, --port 0..65535",
            suggestions=["poisson-prove dashboard --help"], exit_code=EXIT_USAGE,
        )
    from poisson_prove.shared.console import is_pretty

    if is_pretty(args, sys.stderr):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        bar = Progress(TextColumn("runs"), BarColumn(), MofNCompleteColumn(),
                       console=Console(file=sys.stderr), transient=True)
        task = bar.add_task("dashboard", total=None)
        with bar:
            path = write_dashboard(
                args.store, compared_log=_log(), plots=args.plots,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    else:
        path = write_dashboard(args.store, compared_log=_log(), plots=args.plots)
    if not args.serve:
        sys.stdout.write(f"wrote {path}\n")
        return 0
    return _serve(args, path)


def _serve(args: argparse.Namespace, path: Path) -> int:
    from poisson_prove.dashboard import render_dashboard
    from poisson_prove.dashboard.serve import PageCache, make_server

    root = path.parent

    def render() -> str:
        html = render_dashboard(root, compared_log=_log(), plots=args.plots, refresh=args.refresh)
        return html

    cache = PageCache(root, _log(), render)
    try:
        server = make_server(cache, args.port)
    except OSError as exc:
        from poisson_prove.errors import ProveError

        raise ProveError(
            f"cannot serve on 127.0.0.1:{args.port}: {exc.strerror or exc}",
            suggestions=["poisson-prove dashboard --serve (a free port is chosen)"],
        ) from exc
    host, port = server.server_address[:2]
    sys.stdout.write(f"wrote {path}\nserving http://{host}:{port}/ (Ctrl-C to stop)\n")
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        sys.stderr.write("stopped serving\n")
    finally:
        server.server_close()
    return 0


def refreshing(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Wrap a verb so that, however it ends, a dashboard the store has is refreshed."""

    from poisson_prove.errors import EXIT_REFUSED, EXIT_USAGE, ProveError

    def wrapped(args: argparse.Namespace) -> int:
        # A refusal wrote nothing, so nothing is refreshed either; stopped, failed or
        # interrupted sweeps did write, and the page shows what ran.
        try:
            code = func(args)
        except ProveError as err:
            if err.exit_code not in (EXIT_REFUSED, EXIT_USAGE):
                refresh_after(args)
            raise
        except BaseException:
            refresh_after(args)
            raise
        if code not in (EXIT_REFUSED, EXIT_USAGE):
            refresh_after(args)
        return code

    return wrapped


def refresh_after(args: argparse.Namespace) -> None:
    """Refresh the store's dashboard if it has one; a failure is a warning, never the verb's."""
    from poisson_prove.dashboard import refresh_existing
    from poisson_prove.errors import ProveError

    if getattr(args, "dry_run", False):
        return  # --dry-run writes nothing
    try:
        refresh_existing(getattr(args, "store", None), compared_log=_log())
    except ProveError as err:
        sys.stderr.write(f"warning: the dashboard was not refreshed: {err.message}\n")
    except Exception as exc:  # a broken page must never turn a finished sweep into a failure
        sys.stderr.write(f"warning: the dashboard was not refreshed: {type(exc).__name__}: {exc}\n")
