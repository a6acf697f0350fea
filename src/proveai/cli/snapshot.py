"""`proveai snapshot init|show|list|verify|update|diff`: parsing and calling the library; the drawing
is proveai.render's (render.snapshot on the terminal, render.verify_page for report.html)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from prove_common.cliapp import UsageParser, add_plain_option, path_value, print_error
from prove_common.console import is_pretty
from proveai.ci.step_summary import write_step_summary
from proveai.errors import ProveAIExit
from proveai.render.snapshot import (
    RunProgress,
    Screen,
    render_diff,
    render_init,
    render_list,
    render_show,
    render_update,
    render_verify,
)
from proveai.render.verify import step_summary_markdown
from proveai.render.verify_page import write_verify_page
from proveai.snapshot.diffview import snapshot_diff
from proveai.snapshot.gate import SnapshotNotVerified, plan_verify, verify_many, verify_options
from proveai.snapshot.init import init_snapshot
from proveai.snapshot.model import list_snapshots, load_snapshot, snapshot_path
from proveai.snapshot.trust import InvocationTrust, TrustPolicy
from proveai.snapshot.update import update_snapshot
from proveai.snapshot.verify import VerifyResult
from proveai.store import Store, check_name


def verb_with_actions(
    subparsers: argparse._SubParsersAction,
    parent: argparse.ArgumentParser,
    verb: str,
    help_text: str,
    description: str,
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """A verb taking an ACTION (`snapshot init`, `ci init`); without one it prints its help."""
    parser = subparsers.add_parser(verb, parents=[parent], help=help_text, description=description)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=UsageParser)
    return parser, actions


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    parser, actions = verb_with_actions(
        subparsers,
        parent,
        "snapshot",
        "the CI gate: init / show / list / verify / update / diff",
        "Pin known-good agent I/O and verify the pipeline against it.",
    )
    common = UsageParser(add_help=False)
    add_plain_option(common, False)
    init = actions.add_parser("init", parents=[parent, common], help="pin the most recent (or given) trace")
    init.add_argument("name", nargs="?", default="latest", help="snapshot name (default latest)")
    init.add_argument("--trace-id", help="pin this trace (a unique prefix is enough)")
    init.add_argument("--agent", action="append", default=[], help="pin only this agent (repeatable)")
    init.add_argument("--replicates", type=int, default=1, help="re-run the pipeline N times and pin all N")
    init.add_argument("--seed", type=int, default=0, help="seed of the pinned replicates (default 0)")
    init.add_argument("--timeout", type=float, default=600.0, help="seconds per re-run (with --replicates)")
    init.add_argument(
        "--traces", metavar="DIR", type=path_value, help="trace store to pin from (default proveai/traces)"
    )
    init.add_argument(
        "--quick-only", action="store_true", help="pin a trace that cannot be re-run, for --quick checks"
    )

    show = actions.add_parser("show", parents=[parent, common], help="print one snapshot")
    show.add_argument("name", nargs="?", default="latest")

    actions.add_parser("list", parents=[parent, common], help="every snapshot, malformed ones included")

    verify = actions.add_parser(
        "verify",
        parents=[parent, common],
        help="re-run the pipeline and grade every agent",
        epilog="exit codes: 0 nothing failed (drift warns) · 1 regressed, missing or loop count "
        "changed · 2 usage/input error, or a --no-judge mismatch · 3 a change went unjudged "
        "under the strict judge",
    )
    verify.add_argument(
        "name", nargs="?", help="verify only this snapshot (default: all, auto-targeted in CI)"
    )
    verify.add_argument("--quick", action="store_true", help="no re-run: grade the newest stored trace")
    verify.add_argument(
        "--traces", metavar="DIR", type=path_value, help="trace store --quick reads (default proveai/traces)"
    )
    verify.add_argument(
        "--no-judge", action="store_true", help="hash-only (also PROVEAI_NO_JUDGE=1): exit 0/2"
    )
    verify.add_argument("--strict-judge", action="store_true", help="exit 3 if a change could not be judged")
    verify.add_argument("--judge-model", help="the tier-3 judge model (default $PROVEAI_JUDGE_MODEL)")
    verify.add_argument(
        "--judge-max-tokens",
        type=int,
        metavar="N",
        help="max_tokens of each judge request (default $PROVEAI_JUDGE_MAX_TOKENS, else 200)",
    )
    verify.add_argument(
        "--embedder",
        choices=["none", "local", "openai"],
        help="tier 2 (default: openai if PROVEAI_EMBEDDER_MODEL)",
    )
    verify.add_argument("--timeout", type=float, default=600.0, help="seconds per pipeline run (default 600)")
    verify.add_argument(
        "--override", action="append", default=[], metavar="AGENT=PATH", help="what-if system prompt"
    )
    verify.add_argument(
        "--replicates",
        type=int,
        default=None,
        help="re-run N times and test against the pinned noise (default: as many as pinned)",
    )
    verify.add_argument("--seed", type=int, help="seed of the replicates (PROVEAI_SEED in the pipeline)")
    verify.add_argument(
        "--alpha", type=float, default=0.05, help="level of the replicate test (default 0.05)"
    )
    scope = verify.add_mutually_exclusive_group()
    scope.add_argument("--full", action="store_true", help="verify every snapshot, even in CI")
    scope.add_argument("--changed", action="store_true", help="verify what CI would auto-target")
    verify.add_argument(
        "--base",
        help="base ref for --changed (default $GITHUB_BASE_REF, else main) and the reviewed "
        "revision invocations are compared with (default $GITHUB_BASE_REF, else HEAD)",
    )
    verify.add_argument(
        "--trust-invocation",
        action="store_true",
        help="run (and trust from now on) an invocation that changed; in CI one is refused without it",
    )

    update = actions.add_parser("update", parents=[parent, common], help="accept what the last verify saw")
    update.add_argument("name", nargs="?", default="latest")
    update.add_argument("--agent", action="append", default=[], help="accept only this agent (repeatable)")

    diff = actions.add_parser("diff", parents=[parent, common], help="what changed in the last verify")
    diff.add_argument("name", nargs="?", default="latest")
    diff.add_argument("--agent", action="append", default=[], help="only this agent (repeatable)")
    diff.add_argument("--side-by-side", action="store_true", help="the two sides in columns")
    diff.add_argument("--all", action="store_true", help="also show unchanged calls")
    parser.set_defaults(func=run, _parser=parser)


def screen_of(args: argparse.Namespace) -> Screen:
    """stdout for results, stderr for warnings and progress, each pretty when it is a terminal."""
    return Screen(sys.stdout, sys.stderr, is_pretty(args, sys.stdout), is_pretty(args, sys.stderr))


def run(args: argparse.Namespace) -> int:
    handlers = {
        "init": _init,
        "show": _show,
        "list": _list,
        "verify": _verify,
        "update": _update,
        "diff": _diff,
    }
    if not getattr(args, "action", None):
        args._parser.print_help()
        return ProveAIExit.USAGE
    return handlers[args.action](args)


def _init(args: argparse.Namespace) -> int:
    store = Store()
    result = init_snapshot(
        snapshots_dir=store.snapshots_dir,
        traces_dir=Path(args.traces) if args.traces else store.traces_dir,
        name=args.name,
        trace_id=args.trace_id,
        agents=args.agent,
        replicates=args.replicates,
        seed=args.seed,
        quick_only=args.quick_only,
        timeout_s=args.timeout,
        progress=RunProgress(screen_of(args), f"init {args.name!r}") if args.replicates > 1 else None,
    )
    render_init(result, screen_of(args))
    return ProveAIExit.OK


def _show(args: argparse.Namespace) -> int:
    snap = load_snapshot(snapshot_path(Store().snapshots_dir, check_name("snapshot", args.name)))
    render_show(snap, screen_of(args))
    return ProveAIExit.OK


def _list(args: argparse.Namespace) -> int:
    store = Store()
    render_list(list_snapshots(store.snapshots_dir), store.snapshots_dir, screen_of(args))
    return ProveAIExit.OK


def _verify(args: argparse.Namespace) -> int:
    store = Store()
    screen = screen_of(args)
    options = verify_options(
        quick=args.quick,
        no_judge=args.no_judge,
        strict_judge=args.strict_judge,
        timeout_s=args.timeout,
        overrides=args.override,
        replicates=args.replicates,
        seed=args.seed,
        alpha=args.alpha,
        judge_model=args.judge_model,
        embedder=args.embedder,
        judge_max_tokens=args.judge_max_tokens,
    )
    plan = plan_verify(store.snapshots_dir, args.name, full=args.full, changed=args.changed, base=args.base)
    if plan.reason:
        screen.line(plan.reason)

    def untrusted(trust: InvocationTrust) -> None:
        accepted = "trusted from now on (--trust-invocation)" if args.trust_invocation else (
            "review it; --trust-invocation stops this warning"
        )
        screen.warn(f"warning: snapshot {trust.snapshot!r} runs {trust.command}, {trust.change}: {accepted}")

    def show(outcome: VerifyResult | SnapshotNotVerified) -> None:
        if isinstance(outcome, SnapshotNotVerified):
            print_error(outcome)
            return
        write_verify_page(outcome)
        render_verify(outcome, screen)

    batch = verify_many(
        plan,
        options,
        snapshots_dir=store.snapshots_dir,
        runs_dir=store.runs_dir,
        traces_dir=Path(args.traces) if args.traces else store.traces_dir,
        progress_for=lambda name: RunProgress(screen, f"verify {name!r}"),
        on_done=show,
        trust=TrustPolicy.from_env(accept=args.trust_invocation, base=args.base),
        on_untrusted=untrusted,
    )
    markdown = step_summary_markdown(batch.results, batch.reason, [f.message for f in batch.failures])
    problem = write_step_summary(markdown)
    if problem:
        screen.warn(f"warning: {problem}")
    return batch.exit_code


def _update(args: argparse.Namespace) -> int:
    store = Store()
    result = update_snapshot(
        snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, name=args.name, agents=args.agent
    )
    render_update(result, args.agent, screen_of(args))
    return ProveAIExit.OK


def _diff(args: argparse.Namespace) -> int:
    store = Store()
    report = snapshot_diff(
        snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, name=args.name, agents=args.agent
    )
    render_diff(report, screen_of(args), side_by_side=args.side_by_side, everything=args.all)
    return ProveAIExit.OK
