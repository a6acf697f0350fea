"""A sweep whose process dies never reads as success: `supervised_sweep` runs the in-process
sweep in a forked worker and reports how that worker ended, however it ended.

Rollouts that run in the sweep's own process (the local backend without `--episode-timeout`)
can end it in ways no Python code survives: `posix._exit`, C's `_exit` through ctypes,
`os._exit` from a thread of their own, SIGTERM or SIGKILL sent to their own process, a crash.
Run in this process, each of them ended the command with the rollout's code (often 0, which
CI reads as success) and, under `--json`, an empty stdout. So this process forks a worker that
runs `execute_sweep` and sends back its result (or its error) through a pipe; this process
only waits. When the worker ends without a result, this process reads what the run stores,
records it in the manifest (counts, a `stop` event, reason `process_ended`) and returns a
SweepResult with verdict `process_exit` and `process_ended` saying how: the command prints one
`error:` line (and with `--json` one document) and exits 3.

- The worker is forked after the target was imported and checked, so it starts at once (no
  re-import, no new interpreter: a fork and a pipe, about a millisecond).
- The worker has a process group of its own, so a terminal's Ctrl-C (or a CI cancel's SIGTERM)
  reaches this process only, which passes it on once as SIGINT: the worker stops as on Ctrl-C
  (what ran is kept, exit 130, `next: --resume`). A SIGINT the rollout sends its own process
  is that Ctrl-C too.
- The worker dies with this process (Linux: PR_SET_PDEATHSIG), so `kill -9` of the command
  still stops everything at once, as the crash-safety guarantees assume.
- Atexit hooks a rollout registers in the worker run when the worker ends; those registered
  while the target was imported run once, when this process ends.

Without `os.fork` (Windows), with another backend or with `--episode-timeout` (where episodes
already run in processes of their own), `supervised_sweep` is `execute_sweep`.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from poisson_prove.design.seeds_ahead import SeedsAhead
from poisson_prove.episode.run import set_exit_notice
from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.store.checks import stored_keys
from poisson_prove.store.info import RunInfo
from poisson_prove.sweep.prepare import PreparedSweep
from poisson_prove.sweep.result import SweepResult
from poisson_prove.sweep.running import Progress, execute_sweep

_FRAME = struct.Struct("!Q")  # each message: its pickle's length, then the pickle
_REAL_EXIT = os._exit  # the worker's own end: never the guarded os._exit


def supervises(prepared: PreparedSweep) -> bool:
    """Whether the sweep's rollouts run in the sweep's own process, so a worker guards it."""
    return (
        hasattr(os, "fork")
        and prepared.plan.backend == "local"
        and prepared.request.episode_timeout is None
    )


def supervised_sweep(
    prepared: PreparedSweep,
    *,
    progress: Progress | None = None,
    close_progress: Callable[[], None] | None = None,
) -> SweepResult:
    """`execute_sweep(prepared)` in a worker process; its result, or how the worker died.

    `close_progress` ends the progress display where it was drawn (in the worker). Raises what
    `execute_sweep` raises (a ProveError as one; anything else as itself where it pickles)."""
    if not supervises(prepared):
        try:
            return execute_sweep(prepared, progress=progress)
        finally:
            if close_progress is not None:
                close_progress()
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    started = time.perf_counter()
    # This process only waits: on a second core it derives a large plan's seeds meanwhile.
    ahead = prepared.plan.seeds_ahead()
    pid = -1
    gc.freeze()  # the worker's collections skip what exists now: no copy of every page touched
    try:
        pid = os.fork()
    finally:
        if pid != 0:
            gc.unfreeze()
    if pid == 0:  # the worker: never returns
        os.close(read_end)
        _worker(prepared, write_end, parent, progress, close_progress, ahead)
    os.close(write_end)
    if ahead is not None:
        ahead.produce()
    try:
        with _forwarding_interrupts(pid):
            messages, status = _wait(pid, read_end)
    finally:
        if ahead is not None:
            ahead.stop()
    return _outcome(prepared, messages, status, time.perf_counter() - started)


# The worker ------------------------------------------------------------------------------------


class _Channel:
    """Frames to the supervisor on one pipe, one writer at a time (the notice may come from a
    thread of the rollout's own)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        data = _FRAME.pack(len(data)) + data
        with self.lock:
            while data:
                data = data[os.write(self.fd, data) :]


def _worker(
    prepared: PreparedSweep,
    fd: int,
    parent: int,
    progress: Progress | None,
    close_progress: Callable[[], None] | None,
    ahead: SeedsAhead | None = None,
) -> None:
    code = 0
    try:
        seeds = ahead.consumer() if ahead is not None else None
        _detach(parent)
        atexit._clear()  # the supervisor runs its own hooks; the worker only those it registers
        channel = _Channel(fd)
        set_exit_notice(lambda text: channel.send(("notice", text)))
        sent = channel.send

        def send(message: tuple[Any, ...]) -> None:  # what the rollouts printed comes out first
            sys.stdout.flush()
            sys.stderr.flush()
            sent(message)

        channel.send = send  # type: ignore[method-assign]
        try:
            try:
                result = execute_sweep(
                    prepared,
                    progress=progress,
                    opened=lambda run: channel.send(("run", str(run.path))),
                    seeds=seeds,
                )
            finally:
                if close_progress is not None:
                    close_progress()
            channel.send(("result", result))
        except ProveError as err:
            channel.send(("error", err.message, list(err.suggestions), int(err.exit_code)))
        except KeyboardInterrupt:
            channel.send(("interrupted",))
        except BaseException as exc:  # a bug: the supervisor raises it, and the CLI logs it
            channel.send(("unexpected", _picklable(exc), traceback.format_exc()))
        atexit._run_exitfuncs()
    except BaseException:  # nothing may return into the supervisor's code from here
        code = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            _REAL_EXIT(code)


def _detach(parent: int) -> None:
    """A process group of its own (Ctrl-C reaches the supervisor, which passes it on once) and,
    on Linux, death with the supervisor (kill -9 of the command stops the sweep)."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass  # e.g. a session leader: the supervisor then passes Ctrl-C on as well
    if sys.platform.startswith("linux"):
        import ctypes  # the worker only, Linux only: prctl has no Python binding

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
    if os.getppid() != parent:  # the supervisor is already gone
        _REAL_EXIT(1)


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # its class or fields do not pickle: keep its type's name and text
        return RuntimeError(f"{type(exc).__name__}: {exc}")


# The supervisor ---------------------------------------------------------------------------------


class _forwarding_interrupts:
    """While the worker runs, SIGINT and SIGTERM to this process reach the worker as SIGINT."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.saved: dict[int, Any] = {}

    def _forward(self, signum: int, frame: FrameType | None) -> None:
        try:
            os.kill(self.pid, signal.SIGINT)
        except ProcessLookupError:
            pass

    def __enter__(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self.saved[signum] = signal.signal(signum, self._forward)

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.saved.items():
            signal.signal(signum, handler)


def _wait(pid: int, fd: int) -> tuple[list[tuple[Any, ...]], int]:
    """The worker's messages until its result (or its end) and its wait status.

    The pipe may stay open after the worker is gone (a process the rollout started holds it),
    so its end is seen by waiting for the worker, not by the pipe's EOF."""
    buffer = bytearray()
    messages: list[tuple[Any, ...]] = []
    status: int | None = None
    try:
        while True:
            final = any(m[0] in ("result", "error", "interrupted", "unexpected") for m in messages)
            if final:  # it ends now; its exit (freeing its memory) need not be waited for here
                done, status = os.waitpid(pid, os.WNOHANG)
                if not done:
                    reap = threading.Thread(target=os.waitpid, args=(pid, 0), name="prove-reap", daemon=True)
                    reap.start()
                break
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    buffer += chunk
                    messages += _frames(buffer)
                    continue
                _, status = os.waitpid(pid, 0)  # EOF: the worker (and all that held it) ended
                break
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                while select.select([fd], [], [], 0)[0]:  # what it sent before it ended
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break
                    buffer += chunk
                messages += _frames(buffer)
                break
    finally:
        os.close(fd)
    return messages, int(status or 0)


def _frames(buffer: bytearray) -> list[tuple[Any, ...]]:
    """The whole frames at the start of `buffer` (removed from it); a torn last one stays."""
    out: list[tuple[Any, ...]] = []
    while len(buffer) >= _FRAME.size:
        (size,) = _FRAME.unpack_from(buffer)
        if len(buffer) < _FRAME.size + size:
            break
        out.append(pickle.loads(bytes(buffer[_FRAME.size : _FRAME.size + size])))
        del buffer[: _FRAME.size + size]
    return out


@dataclass
class _Heard:
    run: str | None = None
    notice: str | None = None
    final: tuple[Any, ...] | None = None
    rest: list[tuple[Any, ...]] = field(default_factory=list)


def _outcome(
    prepared: PreparedSweep, messages: list[tuple[Any, ...]], status: int, seconds: float
) -> SweepResult:
    heard = _Heard()
    for message in messages:
        if message[0] == "run":
            heard.run = message[1]
        elif message[0] == "notice":
            heard.notice = message[1]
        else:
            heard.final = message
    final = heard.final
    if final is not None and final[0] == "result":
        return final[1]
    if final is not None and final[0] == "error":
        raise ProveError(final[1], suggestions=final[2], exit_code=final[3])
    if final is not None and final[0] == "interrupted":
        raise KeyboardInterrupt
    if final is not None and final[0] == "unexpected":
        exc: BaseException = final[1]
        exc.add_note(f"in the sweep's worker process:\n{final[2]}")
        raise exc
    how = heard.notice or _ended(status)
    if heard.run is None:
        raise ProveError(
            f"{how} before its run was created; nothing was stored",
            suggestions=["poisson-prove sweep --episode-timeout 600   (each episode in its own process)"],
            exit_code=ProveExit.STOPPED,
        )
    return _ended_result(prepared, Path(heard.run), how, seconds)


def _ended(status: int) -> str:
    """How the worker ended, for the error line."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the sweep's process was ended by {name} while it ran episodes (a signal, or a crash)"
    return (
        f"the sweep's process exited with code {code} while it ran episodes (a rollout ended it: "
        "posix._exit, C's _exit, or the like)"
    )


def _ended_result(prepared: PreparedSweep, folder: Path, how: str, seconds: float) -> SweepResult:
    """What the dead worker's run stores, recorded in its manifest, as a SweepResult."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    info = RunInfo(folder, manifest)
    has_batches = bool(info.batch_files())
    done = len(stored_keys(info)) if has_batches else 0
    errored = info.errored_count() if has_batches else 0
    plan = prepared.plan
    if done >= plan.rollouts:  # every episode stored: it ended while it finished the run
        ended, during, _ = how.partition(" while it ran episodes")
        how = ended + " after every episode was stored, as it finished the run" if during else how
    counts = {**(manifest.get("counts") or {}), "planned": plan.rollouts, "done": done, "errored": errored}
    try:  # the dead worker's lock is gone with it; a process the rollout started may hold it still
        writer = prepared.store.open_run(info, hold=True)
    except ProveError:
        writer = None
    if writer is not None:
        try:
            writer.update_manifest(counts=counts)
            writer.event("stop", reason="process_ended", how=how, done=done, errored=errored)
        finally:
            writer.release()
    return SweepResult(
        verdict="process_exit",
        run_id=str(manifest["run_id"]),
        name=str(manifest["name"]),
        status="partial",
        salt=plan.salt,
        paired_with=manifest.get("paired_with"),
        paired_with_name=manifest.get("paired_with_name"),
        planned=plan.rollouts,
        done=done,
        errored=errored,
        ran=max(0, done - prepared.stored),
        seconds=seconds,
        capture_missing=dict(prepared.capture_missing),
        process_ended=how,
        sequential=manifest.get("sequential"),
    )
