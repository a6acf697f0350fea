"""`proveai snapshot init|show|list|verify|update|diff`: parsing and calling the library; the drawing
is in _snapshot_output.py."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from poisson_prove.shared.cliapp import UsageParser, print_error
from proveai.cli._snapshot_output import RunProgress, console_for, emit_table, render_verify
from proveai.errors import EXIT_OK, EXIT_USAGE, ProveAIError


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


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
    common.add_argument("--plain", action="store_true", help="plain text even on a terminal")

    init = actions.add_parser("init", parents=[parent, common], help="pin the most recent (or given) trace")
    init.add_argument("name", nargs="?", default="latest", help="snapshot name (default latest)")
    init.add_argument("--trace-id", help="pin this trace (a unique prefix is enough)")
    init.add_argument("--agent", action="append", default=[], help="pin only this agent (repeatable)")
    init.add_argument("--replicates", type=int, default=1, help="re-run the pipeline N times and pin all N")
    init.add_argument("--seed", type=int, default=0, help="seed of the pinned replicates (default 0)")
    init.add_argument("--timeout", type=float, default=600.0, help="seconds per re-run (with --replicates)")
    init.add_argument("--traces", metavar="DIR", help="trace store to pin from (default proveai/traces)")
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
    verify.add_argument("--traces", metavar="DIR", help="trace store --quick reads (default proveai/traces)")
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
    verify.add_argument("--base", help="base ref for --changed (default $GITHUB_BASE_REF, else main)")

    update = actions.add_parser("update", parents=[parent, common], help="accept what the last verify saw")
    update.add_argument("name", nargs="?", default="latest")
    update.add_argument("--agent", action="append", default=[], help="accept only this agent (repeatable)")

    diff = actions.add_parser("diff", parents=[parent, common], help="what changed in the last verify")
    diff.add_argument("name", nargs="?", default="latest")
    diff.add_argument("--agent", action="append", default=[], help="only this agent (repeatable)")
    diff.add_argument("--side-by-side", action="store_true", help="the two sides in columns")
    diff.add_argument("--all", action="store_true", help="also show unchanged calls")
    parser.set_defaults(func=run, _parser=parser)


def _store() -> Any:
    from proveai.store import Store

    return Store()


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
        return EXIT_USAGE
    return handlers[args.action](args)


def _init(args: argparse.Namespace) -> int:
    from proveai.snapshot.pin import init_snapshot

    store = _store()
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
        progress=RunProgress(args, f"init {args.name!r}") if args.replicates > 1 else None,
    )
    snap = result.snapshot
    extra = f" · {snap.replicates} replicate(s)" if snap.replicates > 1 else ""
    quick = " · quick-only" if snap.quick_only else ""
    tail = f"{len(snap.agents)} agent(s){extra}{quick} · trace {snap.trace_id[:12]}…"
    if result.unchanged:
        print(f"Snapshot '{snap.name}' v{snap.version} already pins this — {tail}")
    else:
        print(f"Wrote snapshot '{snap.name}' v{snap.version} — {tail}")
    if result.varying:
        sys.stderr.write(
            f"warning: {', '.join(result.varying)} gave different outputs for the same input "
            "(a sampled model): a single-run verify cannot tell that noise from a regression\n"
        )
        if snap.replicates < 2:
            sys.stderr.write(f"next: proveai snapshot init {snap.name} --replicates 10\n")
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from proveai.snapshot.model import check_name, load_snapshot, short_hash, snapshot_path

    store = _store()
    snap = load_snapshot(snapshot_path(store.snapshots_dir, check_name(args.name)))
    print(
        f"Snapshot '{snap.name}' v{snap.version} · trace {snap.trace_id[:12]}… · {snap.replicates} capture(s)"
    )
    inv = snap.invocation
    if inv:
        command = " ".join(["python", *inv.get("argv", [])])
        print(f"Invocation: {command}  (cwd {inv.get('cwd', '.')})")
    else:
        print("Invocation: none recorded (verify falls back to --quick)")
    rows = []
    for name, agent in snap.agents.items():
        calls = snap.expected(name)
        rows.append(
            (
                name,
                agent.kind,
                agent.model or "—",
                agent.parent_agent or "—",
                str(len(calls)),
                short_hash(agent.prompt_hash) if agent.prompt is not None else "—",
                short_hash(calls[0].output_hash) if calls else "—",
                agent.source_file or "—",
            )
        )
    emit_table(args, None, ("Agent", "Kind", "Model", "Parent", "Calls", "Prompt", "Output", "Source"), rows)
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    from proveai.snapshot.model import list_snapshots

    store = _store()
    entries = list_snapshots(store.snapshots_dir)
    if not entries:
        print(f"No snapshots in {store.snapshots_dir}")
        print("next: proveai snapshot init")
        return EXIT_OK
    rows = []
    for entry in entries:
        snap = entry.snapshot
        if snap is None:
            rows.append((entry.name, "—", "—", "—", "—", f"malformed: {entry.problem}"))
        else:
            rows.append(
                (
                    entry.name,
                    f"v{snap.version}",
                    str(len(snap.agents)),
                    str(snap.replicates),
                    f"{snap.trace_id[:12]}…",
                    "quick-only" if snap.quick_only else "ok",
                )
            )
    emit_table(args, None, ("Name", "Version", "Agents", "Captures", "Trace", "Status"), rows)
    return EXIT_OK


def _verify(args: argparse.Namespace) -> int:
    from proveai.snapshot.model import check_name, list_snapshots, load_snapshot, snapshot_path
    from proveai.snapshot.render import step_summary_markdown
    from proveai.snapshot.verify import VerifyOptions, verify_snapshot
    from proveai.snapshot.whatif import parse_overrides

    store = _store()
    options = VerifyOptions(
        quick=args.quick,
        no_judge=args.no_judge or _truthy("PROVEAI_NO_JUDGE"),
        strict_judge=args.strict_judge or _truthy("PROVEAI_STRICT_JUDGE"),
        timeout_s=args.timeout,
        overrides=parse_overrides(args.override),
        replicates=args.replicates or 0,
        seed=args.seed,
        alpha=args.alpha,
        judge_model=args.judge_model,
        embedder=args.embedder,
    )
    if (args.replicates is not None and args.replicates < 1) or args.timeout <= 0 or not 0 < args.alpha < 1:
        raise ProveAIError(
            "--replicates must be >= 1, --timeout > 0 and --alpha in (0, 1)", exit_code=EXIT_USAGE
        )
    if args.judge_max_tokens is not None:
        if args.judge_max_tokens < 1:
            raise ProveAIError("--judge-max-tokens must be >= 1", exit_code=EXIT_USAGE)
        os.environ["PROVEAI_JUDGE_MAX_TOKENS"] = str(args.judge_max_tokens)  # read per judge call
    if args.override and ((args.replicates or 1) > 1 or args.quick):
        raise ProveAIError(
            "--override replays pinned requests: it cannot be combined with --replicates or --quick",
            exit_code=EXIT_USAGE,
        )
    reason = None
    if args.name:
        names = [check_name(args.name)]
        snapshots = {args.name: load_snapshot(snapshot_path(store.snapshots_dir, args.name))}
    else:
        entries = list_snapshots(store.snapshots_dir)
        broken = [e for e in entries if e.snapshot is None]
        if broken:
            raise ProveAIError(
                f"{broken[0].problem}", suggestions=["proveai snapshot list"], exit_code=EXIT_USAGE
            )
        if not entries:
            raise ProveAIError(
                f"no snapshots in {store.snapshots_dir}",
                suggestions=["proveai snapshot init"],
                exit_code=EXIT_USAGE,
            )
        snapshots = {e.name: e.snapshot for e in entries if e.snapshot is not None}
        names = sorted(snapshots)
        names, reason = _target(args, store, snapshots, names)
    if reason:
        print(reason)
    results = []
    codes = []
    failures: list[str] = []  # snapshots that could not be verified
    for name in names:
        try:
            result = verify_snapshot(
                snapshots[name],
                snapshots_dir=store.snapshots_dir,
                runs_dir=store.runs_dir,
                traces_dir=Path(args.traces) if args.traces else store.traces_dir,
                options=replace(options, progress=RunProgress(args, f"verify {name!r}")),
            )
        except ProveAIError as err:
            if len(names) == 1:
                raise
            # one snapshot that cannot be verified must not hide the others' verdicts
            failure = ProveAIError(f"snapshot {name!r}: {err.message}", suggestions=err.suggestions)
            print_error(failure)
            failures.append(failure.message)
            codes.append(err.exit_code)
            continue
        render_verify(args, result)
        results.append(result)
        codes.append(result.exit_code)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        try:
            with open(summary_path, "a", encoding="utf-8") as handle:
                handle.write(step_summary_markdown(results, reason, failures))
        except OSError as exc:
            sys.stderr.write(
                f"warning: could not write $GITHUB_STEP_SUMMARY ({summary_path}): {exc.strerror}\n"
            )
    for code in (1, 2, 3):
        if code in codes:
            return code
    return EXIT_OK


def _target(
    args: argparse.Namespace, store: Any, snapshots: dict, names: list[str]
) -> tuple[list[str], str | None]:
    from proveai.snapshot.rerun import project_root
    from proveai.snapshot.targeting import in_ci, select_snapshots

    if args.full:
        return names, f"verifying all {len(names)} snapshot(s) (--full)"
    if not (args.changed or in_ci()):
        return names, None
    base = args.base or os.environ.get("GITHUB_BASE_REF") or ("main" if args.changed else None)
    root = project_root()
    try:
        snapshots_rel = store.snapshots_dir.resolve().relative_to(root).as_posix()
    except ValueError:
        snapshots_rel = "proveai/snapshots"
    targeting = select_snapshots(snapshots, root=root, snapshots_dir_rel=snapshots_rel, base_ref=base)
    reason = targeting.reason
    if targeting.skipped:
        reason += f"; skipped: {', '.join(targeting.skipped)}"
    return list(targeting.selected), reason


def _update(args: argparse.Namespace) -> int:
    from proveai.snapshot.update import update_snapshot

    store = _store()
    result = update_snapshot(
        snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, name=args.name, agents=args.agent
    )
    snap = result.snapshot
    which = "every agent" if not args.agent else ", ".join(result.agents)
    print(
        f"Updated snapshot '{snap.name}' v{result.previous_version} → v{snap.version} — accepted {which} "
        f"from run {result.run_dir.name}"
    )
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    from proveai.snapshot.diffview import snapshot_diff

    store = _store()
    report = snapshot_diff(
        snapshots_dir=store.snapshots_dir, runs_dir=store.runs_dir, name=args.name, agents=args.agent
    )
    print(f"Snapshot '{report.snapshot}' v{report.version} vs run {report.run_id}")
    console = console_for(args)
    shown = 0
    for agent_diff in report.agents:
        if not agent_diff.changed and not args.all:
            continue
        shown += 1
        header = f"== {agent_diff.agent} (call {agent_diff.iteration + 1})"
        if agent_diff.note:
            header += f" — {agent_diff.note}"
        print(header)
        for field in agent_diff.fields:
            if not field.changed and not args.all:
                continue
            if args.side_by_side:
                _side_by_side(field, console)
            else:
                print(field.unified or f"--- {field.field}: unchanged")
    if shown == 0:
        print("No differences: every agent matches the snapshot.")
    return EXIT_OK


def _side_by_side(field: Any, console: Any) -> None:
    if console is not None:
        from rich.table import Table
        from rich.text import Text

        table = Table(title=field.field, expand=True, show_lines=False)
        table.add_column("pinned", ratio=1, overflow="fold")
        table.add_column("fresh", ratio=1, overflow="fold")
        table.add_row(Text(field.pinned or "∅"), Text(field.fresh or "∅"))
        console.print(table)
        return
    import shutil

    from proveai.snapshot.diffview import side_by_side_lines

    width = max(20, (shutil.get_terminal_size((120, 20)).columns - 3) // 2)
    print("\n".join(side_by_side_lines(field, width)))
