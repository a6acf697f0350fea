"""Seeds derived ahead by another process (design.seeds_ahead) are the plan's own, block for
block, through a real fork and pipe; a producer that stops, lags or sends wrong bytes never
changes a seed (the reader derives the block itself)."""

from __future__ import annotations

import json
import os
import struct
from array import array

import pytest

from poisson_prove.design import seeds_ahead
from poisson_prove.design.seeding import episode_seeds
from poisson_prove.design.seeds_ahead import SeedsAhead, seeds_ahead_for

SALT = "00112233445566778899aabbccddeeff"
KEYS = ['{"x":"a"}', '{"x":"b"}', '{"x":"c"}']


def _read_in_child(ahead: SeedsAhead, replicates: int, block: int, *, produce: bool = True) -> dict:
    """Fork; the child reads every block (the producer is this process) and reports through a pipe."""
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the consumer
        os.close(report_r)
        code = 0
        try:
            reader = ahead.consumer()
            seeds = {key: [] for key in KEYS}
            for first in range(0, replicates, block):
                got = reader.block(first, range(first, min(first + block, replicates)))
                for key, own in zip(KEYS, got, strict=True):
                    seeds[key].extend(own)
            report = {"seeds": seeds, "read": reader.read, "derived": reader.derived}
            os.write(report_w, json.dumps(report).encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(report_w)
    if produce:
        ahead.produce()
    else:
        os.close(ahead._read)
        os.close(ahead._write)  # a producer that never starts: the reader sees the pipe end
    chunks = []
    while chunk := os.read(report_r, 1 << 16):
        chunks.append(chunk)
    os.close(report_r)
    _, status = os.waitpid(pid, 0)
    if produce:
        ahead.stop()
    assert os.waitstatus_to_exitcode(status) == 0
    return json.loads(b"".join(chunks))


def _expected(replicates: int) -> dict[str, list[int]]:
    return {key: episode_seeds(SALT, key, range(replicates)) for key in KEYS}


def test_every_block_read_from_the_pipe_is_the_plans_own_seeds() -> None:
    replicates, block = 1000, 64
    report = _read_in_child(SeedsAhead(SALT, KEYS, replicates, block), replicates, block)
    assert report["seeds"] == _expected(replicates)
    assert report["derived"] == 1 and report["read"] == -(-replicates // block) - 1  # the first is its own


def test_a_producer_that_never_writes_leaves_the_reader_deriving_every_block() -> None:
    replicates, block = 300, 64
    report = _read_in_child(SeedsAhead(SALT, KEYS, replicates, block), replicates, block, produce=False)
    assert report["seeds"] == _expected(replicates) and report["read"] == 0


def test_wrong_seeds_in_the_pipe_are_refused_and_the_block_derived(monkeypatch: pytest.MonkeyPatch) -> None:
    real = seeds_ahead.episode_seeds

    def wrong(salt: str, condition: str, replicates):  # the producer's hash of another salt
        return real("ffeeddccbbaa99887766554433221100", condition, replicates)

    replicates, block = 500, 100
    ahead = SeedsAhead(SALT, KEYS, replicates, block)
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(report_r)
        try:
            reader = ahead.consumer()
            seeds = [s for first in range(0, replicates, block)
                     for s in reader.block(first, range(first, first + block))[1]]
            os.write(report_w, json.dumps([seeds, reader.read, reader.derived]).encode())
        finally:
            os._exit(0)
    os.close(report_w)
    monkeypatch.setattr(seeds_ahead, "episode_seeds", wrong)  # in the producer only (after the fork)
    ahead.produce()
    data = b""
    while chunk := os.read(report_r, 1 << 16):
        data += chunk
    os.waitpid(pid, 0)
    ahead.stop()
    seeds, read, derived = json.loads(data)
    assert seeds == real(SALT, KEYS[1], range(replicates)) and read == 0 and derived == 5


def test_a_torn_block_is_refused() -> None:
    ahead = SeedsAhead(SALT, KEYS, 200, 100)
    os.write(ahead._write, struct.pack("!QQ", 100, 300) + array("i", [1, 2, 3]).tobytes())
    os.close(ahead._write)
    reader = seeds_ahead.SeedReader(ahead)
    got = reader.block(100, range(100, 200))
    assert got == [episode_seeds(SALT, key, range(100, 200)) for key in KEYS] and reader.derived == 1


def test_small_plans_derive_their_own_seeds() -> None:
    assert seeds_ahead_for(SALT, KEYS, 1000, 4096) is None  # one block: nothing to run ahead of
    assert seeds_ahead_for(SALT, KEYS, 10_000, 4096) is None  # below MIN_EPISODES
    ahead = seeds_ahead_for(SALT, KEYS, 100_000, 4096)
    assert ahead is not None
    ahead.stop()
    os.close(ahead._read)
