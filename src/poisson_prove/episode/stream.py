"""An episode's spans streamed from its child process to the sweep as they happen.

Under `--episode-timeout` an episode runs in a child process that is killed past the limit;
spans kept only in the child would die with it, and the `episode_timeout` (or `process_exit`)
row would say nothing of where the episode was. So the child runner makes each episode's span
list a `StreamedSpans`: every span appended (a `record()`, a step as it opens, an
instrumentor's span, a chaos fault) is sent to the parent at once, and a step again when it
ends. The parent collects them in `SpansSoFar` while it waits for the answer; when the answer
never comes it stores what arrived, each step still open marked `error` with the reason it
ended. Values were already bounded by `max_observation_bytes` in the child (recording.bounded).

Only the child runner streams: in the sweep's own process, a pool thread or a remote worker the
span list is a plain list, with no per-span cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from poisson_prove.episode.recording import EpisodeSpans, bounded
from poisson_prove.episode.row import spans_json

SPAN = "span"  # a streamed span message: (SPAN, episode, index, span)


class StreamedSpans(EpisodeSpans):
    """A span list that sends each span appended (and each step again as it ends) to `send`,
    tagged with `episode` (a thread a finished episode left running may still record)."""

    streams = True

    def __init__(self, send: Callable[[Any], None], episode: Any) -> None:
        super().__init__()
        self._send = send
        self._episode = episode

    def append(self, span: Any) -> None:
        super().append(span)
        self.resend(len(self) - 1)

    def resend(self, index: int) -> None:
        """Send the span at `index` as it is now (a step that has just ended)."""
        try:
            self._send((SPAN, self._episode, index, self[index]))
        except Exception:  # a span that cannot be sent (pipe gone, unpicklable) never fails a step
            pass


class SpansSoFar:
    """The parent's copy of one running episode's spans, by the child's index."""

    def __init__(self, episode: Any) -> None:
        self._episode = episode
        self._spans: dict[int, dict[str, Any]] = {}

    def take(self, message: Any) -> bool:
        """Keep `message` if it is a span of this episode; True for any streamed span, False
        for anything else (the answer)."""
        if type(message) is tuple and len(message) == 4 and message[0] == SPAN:
            _, episode, index, span = message
            if episode == self._episode and isinstance(index, int) and isinstance(span, dict):
                self._spans[index] = span
            return True
        return False

    def json_text(self, stopped_at: float, why: str, limit: int | None) -> str | None:
        """The spans column for an episode that never answered: the spans that arrived, in the
        child's order, each step still open ended at `stopped_at` with status `error`, `why`."""
        if not self._spans:
            return None
        order = sorted(self._spans)
        position = {index: n for n, index in enumerate(order)}  # a span lost in transit leaves no gap
        spans = []
        for index in order:
            span = dict(self._spans[index])
            if span.get("parent") is not None:
                span["parent"] = position.get(span["parent"])
            if span.get("end") is None and span.get("source") == "step":
                span.update(end=stopped_at, status="error", error=bounded(why, limit))
            spans.append(span)
        return str(spans_json(spans))
