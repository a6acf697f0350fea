"""The one progress display of both command lines: a Rich bar on a terminal, plain lines on a
pipe.

Long work calls the reporter once per finished item (`report(done, total)`, or
`report(done, total, item)` to name it), so the call is a cheap comparison until a redraw
(pretty: at most ten a second) or a line (plain) is due. What a plain line says, and whether it
comes for every item or at each tenth of the work, is the caller's choice: the sweep prints
`... 640 of 1,746 rollouts` at each tenth; a replay names each trace.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO, Any, Protocol

__all__ = ["PlainProgress", "ProgressReporter", "RichProgress", "make_progress"]

# (done, total, item) -> the line to print, or None for no line at this call
LineFormat = Callable[[int, int, str], "str | None"]


class ProgressReporter(Protocol):
    def __call__(self, done: int, total: int, item: str = "") -> None: ...

    def close(self) -> None: ...


def _count_line(unit: str) -> LineFormat:
    def line(done: int, total: int, item: str) -> str | None:
        return f"... {done:,} of {total:,} {unit}"

    return line


class PlainProgress:
    """One line per call (`every_tenth=False`) or at each tenth of the work; never an escape
    code. The last call (done == total) prints nothing in tenths mode: the summary follows."""

    def __init__(
        self,
        stream: IO[str],
        total: int = 0,
        *,
        unit: str = "rollouts",
        line: LineFormat | None = None,
        every_tenth: bool = True,
    ) -> None:
        self.stream = stream
        self.line = line or _count_line(unit)
        self.every_tenth = every_tenth
        self.step = max(1, total // 10)
        self.next = self.step

    def __call__(self, done: int, total: int, item: str = "") -> None:
        if self.every_tenth:
            if done < self.next or done >= total:
                return
            self.next = (done // self.step + 1) * self.step
        text = self.line(done, total, item)
        if text is None:
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        return None


class RichProgress:
    """A live bar: a label, done/total, and (as asked) percentage, items per second, time left.

    With a `total` the bar shows at once; without one it starts at the first report (nothing is
    drawn for work that never starts). It disappears when closed (`transient`), leaving the
    terminal to the summary.
    """

    def __init__(
        self,
        stream: IO[str],
        total: int | None = None,
        *,
        label: str = "rollouts",
        rate: bool = True,
        eta: bool = True,
        color: bool = True,
    ) -> None:
        self.stream = stream
        self.label = label
        self.rate = rate
        self.eta = eta
        self.color = color
        self.progress: Any = None  # a rich.progress.Progress once started (rich loads lazily)
        self.task: Any = None
        self.started = time.monotonic()
        self.next_draw = 0.0
        if total is not None:
            self._start(total)

    def _start(self, total: int) -> None:
        # rich: ~40 ms to import, only when a terminal shows the bar
        from rich.console import Console
        from rich.progress import (  # rich: ~40 ms, only on a terminal
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        console = Console(file=self.stream, force_terminal=True, no_color=not self.color)
        columns: list[ProgressColumn] = [
            TextColumn("{task.description}", markup=False),  # the label is text, not markup
            BarColumn(),
            MofNCompleteColumn(),
        ]
        if self.rate:
            columns += [TaskProgressColumn(), TextColumn("{task.fields[rate]}")]
        if self.eta:
            columns += [TextColumn("ETA"), TimeRemainingColumn()]
        progress = Progress(*columns, console=console, transient=True)
        self.task = progress.add_task(self.label, total=total, rate="")
        progress.start()
        self.progress = progress
        self.started = time.monotonic()

    def __call__(self, done: int, total: int, item: str = "") -> None:
        if self.progress is None:
            self._start(total)
        now = time.monotonic()
        if now < self.next_draw and done < total:
            return
        self.next_draw = now + 0.1
        elapsed = max(now - self.started, 1e-9)
        self.progress.update(
            self.task, completed=done, total=total, rate=f"{done / elapsed:,.0f}/s"
        )

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def make_progress(
    stream: IO[str],
    total: int | None = None,
    *,
    pretty: bool,
    label: str = "rollouts",
    unit: str = "rollouts",
    line: LineFormat | None = None,
    every_tenth: bool = True,
    rate: bool = True,
    eta: bool = True,
    color: bool = True,
) -> ProgressReporter:
    """A Rich bar (`pretty`) or plain lines (see the two classes for the options)."""
    if pretty:
        return RichProgress(stream, total, label=label, rate=rate, eta=eta, color=color)
    return PlainProgress(stream, total or 0, unit=unit, line=line, every_tenth=every_tenth)
