"""`proveai engine serve` (the local detection engine) and `proveai engine health`."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from prove_common.loopback import HOST
from proveai.cli.status import add_actions, add_traces_option
from proveai.engine import DEFAULT_PORT
from proveai.engine.baseline import BaselineProfile
from proveai.engine.layers import EngineSettings
from proveai.engine.server import bind, create_app, serve
from proveai.errors import ProveAIError
from proveai.store import default_traces_dir

HELP = "the local detection engine: serve / health"


def _count(low: int):  # argparse type: an integer >= low, with a message naming the bound
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


def _port(text: str) -> int:
    value = _count(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {value}")
    return value


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    actions = add_actions(subparsers, parent, "engine", HELP, run)
    serve = actions.add_parser(
        "serve", parents=[parent], help="run the detection engine on 127.0.0.1 until Ctrl-C",
        description="Serve POST /ingest/traces/stream (SSE), POST /ingest/traces and GET /health on "
        "127.0.0.1 only. Each analyzed trace's detection is written to the trace store.",
    )
    serve.add_argument("--port", type=_port, default=DEFAULT_PORT,
                       help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)")
    add_traces_option(serve)
    serve.add_argument("--no-store", action="store_true", help="do not write traces or detections")
    serve.add_argument("--baseline", metavar="NAME[@VERSION]",
                       help="known-good traces (proveai baseline create) for the loop, path and judge layers")
    serve.add_argument("--judge-model", metavar="MODEL",
                       help="enable the judge layer with this model (off by default)")
    serve.add_argument("--judge-max", type=_count(1), default=3, metavar="N",
                       help="judge at most N flagged agents per trace (default 3)")
    serve.add_argument("--max-iterations", type=_count(1), default=3, metavar="N",
                       help="calls of one agent per trace that count as a loop when the baseline "
                       "does not know the agent (default 3)")
    health = actions.add_parser("health", parents=[parent], help="ask a running engine whether it is up")
    health.add_argument("--endpoint", default=f"http://localhost:{DEFAULT_PORT}", help="the engine's URL")


def run(args: argparse.Namespace) -> int:
    if args.action == "health":
        return _health(args.endpoint)
    return _serve(args)


def _health(endpoint: str) -> int:
    import httpx  # httpx: ~120 ms, only when a request is sent

    try:
        reply = httpx.get(f"{endpoint.rstrip('/')}/health", timeout=5.0)
    except httpx.HTTPError as exc:
        raise ProveAIError(
            f"cannot reach the ProveAI engine at {endpoint} ({exc or type(exc).__name__})",
            suggestions=("start one: proveai engine serve",),
        ) from None
    if reply.status_code != 200:
        raise ProveAIError(f"the engine at {endpoint} answered {reply.status_code} to GET /health")
    info = reply.json()
    baseline = info.get("baseline") or {}
    sys.stdout.write(
        f"engine at {endpoint} is up: proveai {info.get('version')}, "
        f"layers {', '.join(info.get('layers', []))}; "
        f"baseline {baseline.get('name', 'none')}; judge {info.get('judge') or 'off'}; "
        f"{info.get('analyzed', 0)} trace(s) analyzed\n"
    )
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _serve(args: argparse.Namespace) -> int:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ProveAIError(
            f"proveai engine serve needs the engine extra ({exc.name} is not installed)",
            suggestions=("pip install 'poisson-prove[engine]'",),
        ) from None

    baseline = BaselineProfile.load(args.baseline) if args.baseline else None
    settings = EngineSettings(baseline, args.judge_model, args.judge_max, args.max_iterations)
    store = None if args.no_store else Path(args.traces) if args.traces else default_traces_dir()
    sock = bind(args.port)
    port = sock.getsockname()[1]
    out = sys.stdout
    # uvicorn drains on SIGINT/SIGTERM, then re-raises the signal it caught: SIGTERM is made to
    # raise like Ctrl-C, before the banner tells anyone the engine is up, so that a signal at
    # any moment from here ends below, with the "stopped" line and exit 0
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        out.write(f"proveai engine listening on http://{HOST}:{port}\n")
        out.write(
            f"  baseline: {baseline.name + f' ({baseline.traces} trace(s))' if baseline else 'none'}; "
            f"judge: {args.judge_model or 'off'}; store: {store or 'off'}\n"
            "  press Ctrl-C to stop\n"
        )
        out.flush()
        serve(create_app(settings, store), sock)
    except KeyboardInterrupt:
        pass  # stopping is this command's normal end
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    out.write("proveai engine stopped\n")
    return 0
