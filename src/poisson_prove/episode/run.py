"""Running one episode: call the target, catch, time, validate, build the row.

Every backend's worker uses these functions, in this process, a worker thread, a child process
or a remote machine, so everything here is importable by name and works on picklable inputs
(`Job`, `Task`, defined here: what a backend hands its workers):

- `episode.target.load_target(job)` imports the rollout they call (`job.target`).
- `run_into(rollout, job, items, out)` runs episodes one after another in this thread and
  appends each one's row as a tuple (episode.row.ROW_FIELDS): the one place where a call
  becomes a row, used as is by the sweep's in-process fast path.
- `run_episode(rollout, job, task)` is `run_into` for one episode, its row as a dict with the
  store's episode columns (episode.row.EPISODE_COLUMNS): what a backend's worker returns.

Neither raises for what the rollout does: an exception, a `sys.exit`, a non-Episode, an
undeclared outcome or a `t` outside [0, horizon], a `meta` JSON cannot hold (an object, NaN,
infinity) becomes a row with no outcome, `error_kind` (the exception's type name,
`system_exit` or `invalid_episode`) and `error_message` (UTF-8 safe, and set even when the
exception's own __str__ raises); a BaseException of the rollout's own is an error like any.
Only KeyboardInterrupt passes, and `ProcessExit` (see `os_exit_guard`), which carries the
episode's `process_exit` row. A rollout that forks and returns in both processes has its copy
ended at once (`_forked_child`): only the sweep's own process goes on.
`started_at` is the start time as float seconds since the epoch (store.table.rows_to_table
also takes a datetime or ISO text there).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from poisson_prove.episode.model import Episode, InvalidEpisode, validate_episode
from poisson_prove.episode.recording import begin_episode, end_episode
from poisson_prove.episode.row import (
    C_ENCODER,
    EPISODE_COLUMNS,
    META_ENCODERS,
    PLAIN_META_MAX,
    PLAIN_META_TEXTS,
    REPEATED_META,
    meta_json,
    new_meta_encoder,
    spans_json,
)


@dataclass(frozen=True, slots=True)
class Task:
    """One planned episode."""

    condition: str  # the condition's canonical key (conditions.condition_key), stored as `cell`
    cfg: Mapping[str, Any]
    replicate: int
    seed: int


class EpisodeScope(Protocol):
    """A context entered around each rollout call of a run, e.g. `[chaos]`'s fault injection
    (`chaos.inject.ChaosScope`); picklable, since it travels in the `Job` to remote workers."""

    def __call__(self, cfg: Mapping[str, Any], seed: int) -> AbstractContextManager[None]: ...


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to run episodes of one run (picklable)."""

    run_id: str
    target: str  # "pkg.module:function"
    spec_dir: str  # put first on sys.path before importing the target
    outcomes: Sequence[str]
    episode_timeout: float | None = None
    infra_errors: Sequence[str] = ()  # exception type names retried as infrastructure errors
    infra_retries: int = 0
    capture: Mapping[str, Any] = field(default_factory=dict)
    # entered around each rollout call (chaos.config.job_chaos: the faults of [chaos]); None: nothing
    scope: EpisodeScope | None = None
    options: Mapping[str, Any] = field(default_factory=dict)  # backend-specific settings


Rollout = Callable[[dict[str, Any], int], Any]

SYSTEM_EXIT = "system_exit"
INVALID_EPISODE = "invalid_episode"
PROCESS_EXIT = "process_exit"
MAX_ERROR_MESSAGE = 2000


class ProcessExit(BaseException):
    """The target called os._exit in the sweep's own process (see `os_exit_guard`).

    A BaseException, so the rollout's own `except Exception` does not swallow it; `row` is the
    episode's `process_exit` row once run_episode or run_into has built it.
    """

    def __init__(self, code: Any) -> None:
        super().__init__(code)
        self.code = code
        self.row: dict[str, Any] | None = None


_REAL_EXIT = os._exit
_GUARDS = [0]
# Told, instead of stderr, why the process is about to end from a thread of the target's own
# (set by the sweep's supervisor, which reports it: poisson_prove.sweep.supervised).
_EXIT_NOTICE: list[Callable[[str], None] | None] = [None]


def set_exit_notice(notice: Callable[[str], None] | None) -> None:
    """Have `notice(text)` say why the process ends when the target calls os._exit from a
    thread of its own (None: one `error:` line on stderr, as without a supervisor)."""
    _EXIT_NOTICE[0] = notice


def _guarded_exit(code: int) -> None:
    thread = threading.current_thread()
    if os.getpid() != _GUARDS[0]:
        _REAL_EXIT(code)  # a forked child of the rollout: its exit is its own business
    if thread is not threading.main_thread() and not thread.name.startswith("prove-"):
        # A thread the target started: nothing can unwind the sweep from here, and exit 0
        # would read as success. Say so and end with the code for work started, not finished.
        notice = _EXIT_NOTICE[0]
        if notice is not None:
            notice(f"the target called os._exit({code!r}) in a thread of its own")
            _REAL_EXIT(3)
        sys.stderr.write(
            f"error: the target called os._exit({code!r}) in a thread of its own; the sweep's "
            "process ended there and its run stays partial\n"
            "next: poisson-prove sweep --resume --episode-timeout 600\n"
        )
        sys.stderr.flush()
        _REAL_EXIT(3)
    raise ProcessExit(code)


@contextmanager
def os_exit_guard() -> Iterator[None]:
    """While the target runs in this process, os._exit raises ProcessExit instead of ending it.

    A rollout (or an import) that calls os._exit would end the sweep's process with the code
    it chose, often 0, which CI reads as success. Under the guard the episode is stored as
    `process_exit` and the sweep stops there with exit 3. A C-level exit or crash cannot be
    caught this way; `--episode-timeout` runs each episode in a child process for that.
    """
    if os._exit is _guarded_exit:
        yield
        return
    _GUARDS[0] = os.getpid()
    os._exit = _guarded_exit  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = _REAL_EXIT


def process_exit_message(code: Any) -> str:
    return (
        f"the rollout called os._exit({code!r}): its process is gone (in the sweep's own process "
        "the sweep stopped there)"
    )


_OUTCOMES: dict[int, tuple[Any, frozenset[str]]] = {}


def _outcomes_of(job: Job) -> frozenset[str]:
    # Cached per Job object: building a frozenset per episode would cost more than the rest.
    cached = _OUTCOMES.get(id(job))
    if cached is None or cached[0] is not job:
        cached = _OUTCOMES[id(job)] = (job, frozenset(job.outcomes))
    return cached[1]


def _message(exc: BaseException) -> str:
    """The exception's text as stored: cut to MAX_ERROR_MESSAGE, UTF-8 safe, never raising (an
    exception whose own __str__ raises gets a message saying so)."""
    try:
        text = str(exc)
    except Exception as failed:  # the rollout's exception type is at fault: say so, keep the kind
        text = f"(its message cannot be shown: str() of it raised {type(failed).__name__})"
    if not text.isascii():
        text = utf8_safe(text)
    return text if len(text) <= MAX_ERROR_MESSAGE else text[: MAX_ERROR_MESSAGE - 1] + "…"


def utf8_safe(text: str) -> str:
    """`text` with any lone surrogate (which UTF-8 cannot hold) written as its backslash-u escape."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _forked_child() -> None:
    """The rollout forked and returned in its child too: that copy of the sweep must not go on
    running episodes and writing batches (each copy would fork again); it ends here, quietly."""
    _REAL_EXIT(0)


#: How many times this process's line has forked (os.register_at_fork counts them in the child):
#: read after every episode, a list item is a fifth of the cost of asking the OS for the pid.
_FORKS = [0]


def _count_fork() -> None:
    _FORKS[0] += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_count_fork)


def run_episode(rollout: Rollout, job: Job, task: Task) -> dict[str, Any]:
    """Run one episode in this thread and return its row (see the module docstring): `run_into`
    for one episode, its row tuple as a dict."""
    out: list[tuple[Any, ...]] = []
    run_into(rollout, job, ((task.condition, task.cfg, task.replicate, task.seed),), out)
    return row_dict(job, out[0])


def row_dict(job: Job, row: tuple[Any, ...]) -> dict[str, Any]:
    """A row tuple (ROW_FIELDS order) of `job`'s run as a row dict keyed by EPISODE_COLUMNS."""
    return dict(zip(EPISODE_COLUMNS, (job.run_id, *row), strict=True))


def episode_row(job: Job, task: Task, **columns: Any) -> dict[str, Any]:
    """The row of `task` in `job`'s run: its keys from the task, the other columns as given
    (None when left out)."""
    row = dict.fromkeys(EPISODE_COLUMNS)
    key = task.condition  # stored in the `cell` and `cfg` columns (store-format.md says why both)
    row.update(run_id=job.run_id, cell=key, cfg=key, replicate=task.replicate, seed=task.seed)
    row.update(columns)
    return row


def timeout_row(job: Job, task: Task, seconds: float, started: float) -> dict[str, Any]:
    """The row of an episode stopped after `seconds`: no outcome, kind `episode_timeout`."""
    return episode_row(
        job,
        task,
        error_kind="episode_timeout",
        error_message=f"the episode ran past --episode-timeout {seconds:g} s and was stopped",
        started_at=started,
        duration_s=time.time() - started,
    )


def lost_row(job: Job, task: Task, started: float, exitcode: int | None) -> dict[str, Any]:
    """The row of an episode whose child process ended without answering (os._exit, a crash)."""
    row = timeout_row(job, task, 0.0, started)
    row["error_kind"] = PROCESS_EXIT
    row["error_message"] = f"the episode's process ended without a result (exit code {exitcode})"
    return row


# Calling the rollout and building its row: one loop for every episode -----------------------

_NUMBER_TYPES = (int, float)


def _plain_text(items: tuple[tuple[Any, Any], ...]) -> bool:
    """Whether every key and value is a `str` itself (what PLAIN_META_TEXTS may keep)."""
    return all(type(name) is str and type(text) is str for name, text in items)


def run_into(
    rollout: Rollout,
    job: Job,
    items: Iterable[tuple[str, Mapping[str, Any], int, int]],
    out: list[tuple[Any, ...]],
    until: float = math.inf,
    full: int | None = None,
) -> int:
    """Run each (condition, cfg, replicate, seed) in this thread, appending one row tuple per episode;
    return how many were run.

    The one place where a rollout's call becomes a row (run_episode is this for one episode):
    the call inside the job's scope, the exception's error_kind, the validity check (a fast
    check for the common valid Episode, validate_episode's message for anything else), and
    `meta` as strict JSON. A large in-process sweep spends microseconds per episode here, with
    no Task and no dict per episode. Each row is appended in one step, so a KeyboardInterrupt
    never leaves half a row in `out`. When `time.perf_counter()` passes `until`, or `out` holds
    `full` rows, it returns after the episode in hand, leaving the rest of an iterator `items`
    for the next call. A rollout that calls os._exit (under os_exit_guard) has its
    `process_exit` row appended, then the ProcessExit is raised with that row as a dict.
    """
    outcomes = _outcomes_of(job)
    scope = job.scope
    append = out.append
    clock = time.perf_counter
    # Locals, not globals, in the loop below: it runs once per episode.
    episode_type, numbers, inf, join = Episode, _NUMBER_TYPES, math.inf, "".join
    texts, texts_max = PLAIN_META_TEXTS, PLAIN_META_MAX
    texts_get, repeated, repeated_get = texts.get, REPEATED_META, REPEATED_META.get
    if not META_ENCODERS and C_ENCODER:
        META_ENCODERS.append(new_meta_encoder())
    encode = META_ENCODERS[0] if META_ENCODERS else None
    wall0, clock0 = time.time(), clock()
    # A rollout that forks and returns twice (see _forked_child): os.fork is seen after the
    # episode by the fork count, a C library's own fork (no at-fork hooks) by the pid before
    # this call returns its rows, so neither copy writes what the other ran.
    forks, forked, pid = _FORKS, _FORKS[0], os.getpid()
    spans, token = begin_episode()  # one list for the call, emptied after each episode's row
    ran = 0
    room = sys.maxsize if full is None else full - len(out)  # rows until `out` holds `full`
    halted: ProcessExit | None = None
    meta: Any  # what the rollout returned, read once: checked below before any use
    plain: tuple[Any, ...] | None
    t: Any
    horizon: Any
    try:
        for condition, cfg, replicate, seed in items:
            start = clock()
            kind = None
            try:
                if scope is None:
                    value = rollout(dict(cfg), seed)
                else:
                    with scope(cfg, seed):
                        value = rollout(dict(cfg), seed)
            except ProcessExit as exc:
                halted, kind, message = exc, PROCESS_EXIT, process_exit_message(exc.code)
            except SystemExit as exc:
                kind, message = SYSTEM_EXIT, f"the rollout called sys.exit({exc.code!r})"
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # a BaseException of the rollout's own is its error too
                kind, message = type(exc).__name__, _message(exc)
            end = clock()
            if forks[0] != forked:
                _forked_child()
            if kind is None:
                if type(value) is episode_type:
                    meta, t, horizon = value.meta, value.t, value.horizon
                else:
                    meta = t = horizon = None
                if not (
                    type(meta) is dict
                    and value.outcome in outcomes
                    and type(t) in numbers
                    and type(horizon) in numbers
                    and 0 <= t <= horizon < inf
                    and horizon > 0
                ):
                    try:
                        validate_episode(value, outcomes)
                        meta = dict(value.meta or {})
                        t, horizon = float(value.t), float(value.horizon)  # NumPy's numbers too
                    except InvalidEpisode as exc:
                        kind, message = INVALID_EPISODE, _message(exc)
            if kind is None:
                # A meta of plain text only (case ids, labels: most rollouts') repeats across a
                # sweep: its text is looked up by its items (the encoder's text, kept once). Only
                # such metas are kept, so a meta found is one whose items equal plain text, which
                # only text does (a number or None never equals a str): its JSON is the one kept.
                # First the one its condition repeated last: equal as a dict and in key order
                # (the JSON's), it is that text.
                last = repeated_get(condition)
                try:
                    meta_text = (
                        last[1]
                        if last is not None
                        and last[0] == meta
                        and (len(meta) == 1 or list(meta) == last[2])
                        else None
                    )
                except Exception:  # a value whose == raises (a NumPy array): looked up below
                    meta_text = None
                plain = None
                if meta_text is None:
                    try:
                        plain = tuple(meta.items())  # a dict: checked above
                        meta_text = texts_get(plain)
                    except Exception:  # an unhashable value (a list, a dict): encoded below
                        plain = meta_text = None
                    if meta_text is not None:  # a plain-text meta seen before: it repeats
                        if len(repeated) >= texts_max:
                            repeated.clear()
                        repeated[condition] = (dict(meta), meta_text, list(meta))
                try:
                    if meta_text is None:
                        meta_text = join(encode(meta, 0)) if encode is not None else meta_json(meta)
                        if plain is not None and len(texts) < texts_max and _plain_text(plain):
                            texts[plain] = meta_text
                except (ValueError, TypeError, RecursionError) as exc:
                    if encode is not None:  # its circular-reference markers may hold entries
                        encode = META_ENCODERS[0] = new_meta_encoder()
                    kind, message = INVALID_EPISODE, f"meta cannot be stored as JSON: {exc}"
                else:
                    if not meta_text.isascii() and utf8_safe(meta_text) is not meta_text:
                        kind, message = INVALID_EPISODE, (
                            "meta cannot be stored as JSON: it holds a lone surrogate (such as "
                            "'\\ud800'), which UTF-8 cannot encode"
                        )
            traced = spans_json(spans) if spans else None
            if traced is not None:
                spans.clear()
                if not traced.isascii():
                    traced = utf8_safe(traced)
            if kind is None:
                case = meta.get("case_id")  # a dict here: checked above
                append(
                    (
                        condition,
                        condition,  # the `cfg` column holds the key's text too (store-format.md)
                        replicate,
                        seed,
                        value.outcome,
                        t,
                        horizon,
                        case if type(case) is str else None if case is None else str(case),
                        meta_text,
                        None,
                        None,
                        wall0 + (start - clock0),
                        end - start,
                        traced,
                    )
                )
            else:
                append(
                    (
                        condition,
                        condition,
                        replicate,
                        seed,
                        None,
                        None,
                        None,
                        None,
                        None,
                        kind,
                        message,
                        wall0 + (start - clock0),
                        end - start,
                        traced,
                    )
                )
            ran += 1
            if halted is not None:
                halted.row = row_dict(job, out[-1])
                raise halted
            if end >= until or ran >= room:
                break
    finally:
        end_episode(token)
        if os.getpid() != pid:
            _forked_child()
    return ran
