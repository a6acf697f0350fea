"""Progress of a long sweep: a rich bar with rate and ETA on a terminal, plain lines on a pipe.

The sweep calls the reporter once per finished rollout, so the call is a cheap comparison
until a redraw (pretty: at most ten a second) or a line (plain: each tenth of the work) is due.
"""

from __future__ import annotations

import time
from typing import IO, Any


class PlainProgress:
    """`... 640 of 1,746 rollouts` at each tenth of the work; never an escape code."""

    def __init__(self, stream: IO[str], total: int) -> None:
        self.stream = stream
        self.total = total
        self.step = max(1, total // 10)
        self.next = self.step

    def __call__(self, done: int, total: int) -> None:
        if done < self.next or done >= total:
            return
        self.next = (done // self.step + 1) * self.step
        self.stream.write(f"... {done:,} of {total:,} rollouts\n")
        self.stream.flush()

    def close(self) -> None:
        return None


class RichProgress:
    """A live bar: done/total, percentage, rollouts per second, time left."""

    def __init__(self, stream: IO[str], total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        console = Console(file=stream, force_terminal=True)
        self.progress = Progress(
            TextColumn("rollouts"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task("sweep", total=total, rate="")
        self.progress.start()
        self.started = time.monotonic()
        self.next_draw = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now < self.next_draw and done < total:
            return
        self.next_draw = now + 0.1
        elapsed = max(now - self.started, 1e-9)
        self.progress.update(self.task, completed=done, rate=f"{done / elapsed:,.0f}/s")

    def close(self) -> None:
        self.progress.stop()


def make_progress(stream: IO[str], total: int, *, pretty: bool) -> Any:
    return RichProgress(stream, total) if pretty else PlainProgress(stream, total)
