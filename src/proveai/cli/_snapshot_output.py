"""How `proveai snapshot` draws its results: tables (Rich on a terminal, plain on a pipe), the
re-run progress, the verify summary and the warnings for changes nobody checked."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def console_for(args: argparse.Namespace, stderr: bool = False) -> Any:
    from poisson_prove.shared.console import is_pretty

    stream = sys.stderr if stderr else sys.stdout
    if not is_pretty(args, stream):
        return None
    from rich.console import Console

    return Console(file=stream)


def emit_table(args: argparse.Namespace, title: str | None, headers: Any, rows: Any) -> None:
    from proveai.snapshot.render import plain_table, rich_table

    console = console_for(args)
    if console is not None:
        console.print(rich_table(title, headers, rows))
        return
    if title:
        print(title)
    print(plain_table(headers, rows))


class RunProgress:
    """Pipeline re-runs as they happen: a rich bar on a terminal, plain lines on a pipe.

    Written to stderr so stdout stays the result.
    """

    def __init__(self, args: argparse.Namespace, label: str) -> None:
        self.label = label
        self.console = console_for(args, stderr=True)
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.console is None:
            if done < total:
                sys.stderr.write(f"{self.label}: pipeline run {done + 1} of {total}\n")
                sys.stderr.flush()
            return
        if self.bar is None:
            from rich.progress import Progress

            self.bar = Progress(console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(f"{self.label}: re-running the pipeline", total=total)
        self.bar.update(self.task, completed=done)
        if done >= total:
            self.bar.stop()
            self.bar = None


def render_verify(args: argparse.Namespace, result: Any) -> None:
    from proveai.snapshot.render import (
        REPLICATE_HEADERS,
        VERDICT_HEADERS,
        replicate_rows,
        summary_line,
        verdict_cells,
    )

    title = f"Snapshot '{result.snapshot.name}' v{result.snapshot.version}"
    emit_table(args, title, VERDICT_HEADERS, verdict_cells(result))
    if result.replicate_verdicts:
        emit_table(
            args,
            "Replicates (failing = regressed, missing or iteration count changed)",
            REPLICATE_HEADERS,
            replicate_rows(result),
        )
    for note in result.notes:
        print(f"note: {note}")
    print(summary_line(result))
    print(f"Report: {result.run_dir / 'report.html'}")
    drifted = [v.agent for v in result.verdicts if v.status == "drifted"]
    if drifted:
        sys.stderr.write(f"warning: drifted (not failing): {', '.join(drifted)}\n")
    unjudged = result.unjudged
    if unjudged:
        warn_unjudged(result, unjudged)
    judge = result.metrics.get("judge")
    if judge and (judge.get("calls") or judge.get("malformed")):
        sys.stderr.write(
            f"judge: {judge['calls']} live call(s), {judge['malformed']} malformed repl(ies), "
            f"{judge['seconds']:.1f} s (max_tokens {judge['max_tokens']})\n"
        )


def warn_unjudged(result: Any, unjudged: Any) -> None:
    """The loud warning for changes nobody checked, with a next: line saying what is wrong."""
    names = ", ".join(v.agent for v in unjudged)
    if result.metrics.get("judge_model") is None:
        sys.stderr.write(
            f"warning: hash-only mode: {len(unjudged)} agent(s) changed and were not graded: {names}\n"
        )
        return
    noisy = [v for v in unjudged if v.rationale.startswith("outputs vary")]
    judged = [v for v in unjudged if v not in noisy]
    if noisy:
        sys.stderr.write(
            f"warning: the outputs of {', '.join(v.agent for v in noisy)} vary from run to run (sampled "
            "model, same input, unchanged agent): one run cannot call that a regression\n"
            f"next: proveai snapshot init {result.snapshot.name} --replicates 10, then verify with "
            "--replicates 10\n"
        )
    if not judged:
        return
    tail = "; --strict-judge makes this exit 3" if result.exit_code not in (1, 3) else ""
    sys.stderr.write(
        f"warning: {len(judged)} agent(s) changed but the judge could not grade them: "
        f"{', '.join(v.agent for v in judged)}. This run did NOT check them{tail}\n"
    )
    unfit = result.metrics.get("judge_unfit")
    if unfit and " unreachable: " in unfit:
        sys.stderr.write(f"next: the judge is unreachable ({unfit}); check its endpoint and key\n")
    elif unfit:
        sys.stderr.write(
            f"next: the judge failed its known-pair check ({unfit}); pass a stronger model with "
            "--judge-model\n"
        )
