"""`poisson-prove dashboard [--serve]`: the store's runs and comparisons as one HTML page."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.store.compared import log_path
from prove_common.console import is_pretty
from prove_common.progress import RichProgress

HELP = "write (or serve) one HTML page of the store's runs and comparisons"
DESCRIPTION = (
    "Write <store>/dashboard.html: every run, each run's rates per condition with Wilson "
    "intervals, cumulative incidence curves, an episode table to sort and filter (by outcome, "
    "error kind, condition, case, flipped between two runs) whose failed episodes open their "
    "spans, and every comparison printed (plus the latest pair and each recent run against the "
    "one before it) with a forest plot and before/after curves. Self-contained: one inline "
    "script allowed by its hash, nothing fetched. Once it exists, sweep, diff and check refresh "
    "it. --serve serves it on 127.0.0.1, rebuilds it as runs land, and compares any two runs."
)


# The page builder (poisson_prove.dashboard) loads numpy and pyarrow (~250 ms); `sweep` and `diff`
# import this module for its refresh hook, so their --help would pay for it at the top.


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    from poisson_prove.dashboard import DEFAULT_PLOTS  # numpy, pyarrow: see above

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


#: The page's name in the store: the dashboard package's DASHBOARD_FILE, named here so that a
#: store without one is told without importing it (a test holds the two equal).
DASHBOARD_FILE = "dashboard.html"


def _log() -> Path:
    return log_path()


def run(args: argparse.Namespace) -> int:
    from poisson_prove.dashboard import write_dashboard  # numpy, pyarrow: see above

    if args.plots < 0 or args.refresh < 1 or not 0 <= args.port <= 65535:
        raise ProveError(
            "--plots must be 0 or more, --refresh 1 or more, --port 0..65535",
            suggestions=["poisson-prove dashboard --help"], exit_code=ProveExit.USAGE,
        )
    if is_pretty(args, sys.stderr):
        bar = RichProgress(sys.stderr, label="runs", rate=False, eta=False)
        try:
            path = write_dashboard(args.store, compared_log=_log(), plots=args.plots, progress=bar)
        finally:
            bar.close()
    else:
        path = write_dashboard(args.store, compared_log=_log(), plots=args.plots)
    if not args.serve:
        sys.stdout.write(f"wrote {path}\n")
        return 0
    return _serve(args, path)


def _serve(args: argparse.Namespace, path: Path) -> int:
    from poisson_prove.dashboard import render_dashboard  # numpy, pyarrow: see above
    from poisson_prove.dashboard.serve import PageCache, make_server  # numpy, pyarrow: see above

    root = path.parent

    def render(pair: tuple[str, str] | None) -> str:
        return render_dashboard(
            root, compared_log=_log(), plots=args.plots, refresh=args.refresh, pair=pair, served=True
        )

    cache = PageCache(root, _log(), render)
    try:
        server = make_server(cache, args.port)
    except OSError as exc:
        raise ProveError(
            f"cannot serve on 127.0.0.1:{args.port}: {exc.strerror or exc}",
            suggestions=["poisson-prove dashboard --serve (a free port is chosen)"],
        ) from exc
    host, port = server.server_address[:2]
    host = host.decode() if isinstance(host, bytes) else host
    sys.stdout.write(f"wrote {path}\nserving http://{host}:{port}/ (Ctrl-C to stop)\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.stderr.write("stopped serving\n")
    finally:
        server.server_close()
    return 0


def refreshing(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Wrap a verb so that, however it ends, a dashboard the store has is refreshed."""

    def wrapped(args: argparse.Namespace) -> int:
        # A refusal wrote nothing, so nothing is refreshed either; stopped, failed or
        # interrupted sweeps did write, and the page shows what ran.
        try:
            code = func(args)
        except ProveError as err:
            if err.exit_code not in (ProveExit.REFUSED, ProveExit.USAGE):
                refresh_after(args)
            raise
        except BaseException:
            refresh_after(args)
            raise
        if code not in (ProveExit.REFUSED, ProveExit.USAGE):
            refresh_after(args)
        return code

    return wrapped


def refresh_after(args: argparse.Namespace) -> None:
    """Refresh the store's dashboard if it has one; a failure is a warning, never the verb's.
    A store without a page is told by its path alone, before the dashboard's modules (NumPy,
    the comparison, ~0.15 s) are imported."""
    if getattr(args, "dry_run", False):
        return  # --dry-run writes nothing
    try:
        from poisson_prove.store.runs import resolve_store_root  # the store: only after a verb ran

        if not (resolve_store_root(getattr(args, "store", None)) / DASHBOARD_FILE).is_file():
            return
        from poisson_prove.dashboard import refresh_existing  # numpy, pyarrow: see above

        refresh_existing(getattr(args, "store", None), compared_log=_log())
    except ProveError as err:
        sys.stderr.write(f"warning: the dashboard was not refreshed: {err.message}\n")
    except Exception as exc:  # a broken page must never turn a finished sweep into a failure
        sys.stderr.write(f"warning: the dashboard was not refreshed: {type(exc).__name__}: {exc}\n")
