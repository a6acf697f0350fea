"""A large plan's seeds derived ahead of its episodes, by another process, through a pipe.

Each episode's seed is a keyed BLAKE2b hash (design.seeding): about a microsecond, as much as a
trivial rollout itself. In a supervised sweep (sweep.supervised) the supervisor only waits for
its worker, so it derives the seeds there, on the core the worker leaves idle: `SeedsAhead`
is made before the fork; the supervisor calls `produce()` (a thread that writes each block of
the plan's seeds, in the order `Plan.episodes` takes them, into a pipe) and the worker hands
`consumer()` to `Plan.episodes`, which reads each block from the pipe instead of hashing it.

The seeds are the same numbers either way: the worker derives the first block itself (the
supervisor starts one block ahead), checks the first seed of every condition of every block it
reads against its own hash, and derives a block itself whenever the pipe does not hold it (a
supervisor stopped, a short read, a mismatch): never a different seed, at worst the old cost.
"""

from __future__ import annotations

import os
import select
import struct
import threading
from array import array
from collections.abc import Sequence

from poisson_prove.design.seeding import episode_seeds

#: Plans of fewer episodes than this derive their own seeds (a few milliseconds of hashing).
MIN_EPISODES = 50_000
_HEADER = struct.Struct("!QQ")  # the block's first replicate, its number of seeds
_SEED = "i"  # seeds are below 2**31: 4 bytes each
_PIPE_BYTES = 1 << 20  # Linux lets a pipe hold a megabyte: a few blocks of lead


class SeedsAhead:
    """The seeds of `keys` (the plan's conditions, in order) x `replicates`, in blocks of
    `block` replicates, through one pipe from a producer to a consumer process."""

    def __init__(self, salt: str, keys: Sequence[str], replicates: int, block: int) -> None:
        if array(_SEED).itemsize != 4:  # pragma: no cover - every platform CPython runs on
            raise RuntimeError("array('i') is not 4 bytes here")
        self.salt, self.keys, self.replicates, self.block = salt, tuple(keys), replicates, block
        self._read, self._write = os.pipe()
        if hasattr(os, "set_blocking"):
            os.set_blocking(self._write, False)
        try:  # Linux: a larger pipe, so the producer runs ahead by several blocks
            import fcntl  # fcntl: POSIX only, and only to widen the pipe

            fcntl.fcntl(self._write, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
        except (ImportError, OSError):
            pass
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # The producer (the supervisor) ---------------------------------------------------------

    def produce(self) -> None:
        """In the producer process, after the fork: derive every block but the first in a thread."""
        os.close(self._read)
        self._thread = threading.Thread(target=self._produce, name="prove-seeds-ahead", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the producer (the consumer ended): it writes nothing more."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        try:
            os.close(self._write)
        except OSError:
            pass

    def _produce(self) -> None:
        try:
            for first in range(self.block, self.replicates, self.block):
                replicates = range(first, min(first + self.block, self.replicates))
                seeds = array(_SEED)
                for key in self.keys:
                    seeds.extend(episode_seeds(self.salt, key, replicates))
                if not self._send(_HEADER.pack(first, len(seeds)) + seeds.tobytes()):
                    return
        except OSError:
            return  # the consumer is gone (EPIPE): nothing more is wanted

    def _send(self, data: bytes) -> bool:
        view = memoryview(data)
        while view:
            if self._stop.is_set():
                return False
            if not select.select([], [self._write], [], 0.2)[1]:
                continue
            try:
                view = view[os.write(self._write, view) :]
            except BlockingIOError:
                continue
        return True

    # The consumer (the worker) -------------------------------------------------------------

    def consumer(self) -> SeedReader:
        """In the consumer process, after the fork: what `Plan.episodes` reads the blocks from."""
        os.close(self._write)
        return SeedReader(self)


class SeedReader:
    """The worker's end: `block(first, replicates)` is each condition's seeds of that block."""

    def __init__(self, ahead: SeedsAhead) -> None:
        self._ahead = ahead
        self._fd: int | None = ahead._read
        self.read = self.derived = 0  # blocks read from the pipe, and derived here

    def block(self, first: int, replicates: range) -> list[list[int]]:
        """The seeds of `replicates` (starting at `first`) of every condition, in key order."""
        ahead = self._ahead
        if first > 0 and self._fd is not None:
            seeds = self._from_pipe(first, replicates)
            if seeds is not None:
                self.read += 1
                return seeds
        self.derived += 1
        return [episode_seeds(ahead.salt, key, replicates) for key in ahead.keys]

    def _from_pipe(self, first: int, replicates: range) -> list[list[int]] | None:
        ahead, n = self._ahead, len(replicates)
        header = self._exactly(_HEADER.size)
        if header is None or _HEADER.unpack(header) != (first, n * len(ahead.keys)):
            self._give_up()
            return None
        data = self._exactly(4 * n * len(ahead.keys))
        if data is None:
            self._give_up()
            return None
        values = array(_SEED)
        values.frombytes(data)
        flat = values.tolist()
        seeds = [flat[k * n : (k + 1) * n] for k in range(len(ahead.keys))]
        for key, mine in zip(ahead.keys, seeds, strict=True):  # one hash per condition: the check
            if episode_seeds(ahead.salt, key, (first,))[0] != mine[0]:
                self._give_up()
                return None
        return seeds

    def _exactly(self, size: int) -> bytes | None:
        assert self._fd is not None
        chunks, left = [], size
        while left:
            try:
                chunk = os.read(self._fd, left)
            except OSError:
                return None
            if not chunk:
                return None  # the producer ended
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _give_up(self) -> None:
        """Derive every block from here on (the pipe is out of step or closed)."""
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    def close(self) -> None:
        self._give_up()


def seeds_ahead_for(salt: str, keys: Sequence[str], replicates: int, block: int) -> SeedsAhead | None:
    """A SeedsAhead for a plan large enough to gain from it (MIN_EPISODES), else None."""
    if len(keys) * replicates < MIN_EPISODES or replicates <= block or not hasattr(os, "fork"):
        return None
    return SeedsAhead(salt, keys, replicates, block)
