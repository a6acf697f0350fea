"""Bounded input: a log that is not a regular file is one `error:` line, never read or waited
on; an Inspect `.eval` whose members would inflate past the limits is refused before Inspect
inflates it, by its declared sizes and, since those can lie, while it is inflated here."""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from poisson_prove.errors import ProveError
from poisson_prove.importers import logfiles
from poisson_prove.importers.logfiles import check_eval_archive, file_sha256, open_regular
from tests.conftest import CLI, assert_clean_error
from tests.poisson_prove.importers import pairs  # noqa: F401  (teaches zipfile the zstd Inspect writes)

STAMP = "2026-01-01T10-00-00.000"


def _no_store(workdir: Path) -> None:
    assert not (workdir / "prove-runs").exists() or not any((workdir / "prove-runs").iterdir())


@pytest.mark.parametrize("tool", ["inspect", "lm-eval"])
def test_a_device_a_fifo_or_a_link_to_one_is_one_error_line(prove: CLI, workdir: Path, tool: str) -> None:
    name = "log.eval" if tool == "inspect" else f"samples_tiny_{STAMP}.jsonl"
    fifo = workdir / f"fifo-{name}"
    os.mkfifo(fifo)
    link = workdir / f"link-{name}"
    link.symlink_to("/dev/zero")
    for path, kind in (
        ("/dev/zero", "a character device"),
        (str(fifo), "a FIFO"),
        (str(link), "a character"),
    ):
        result = prove("import", tool, path, timeout=60)  # a read of /dev/zero or a FIFO would never end
        assert_clean_error(result, 1, f"{path} is {kind}", "an import reads regular files only")
        assert result.stdout == ""
    _no_store(workdir)


def test_a_fifo_named_like_samples_in_an_lm_eval_folder_is_refused(prove: CLI, workdir: Path) -> None:
    folder = workdir / "out"
    folder.mkdir()
    os.mkfifo(folder / f"samples_tiny_{STAMP}.jsonl")
    result = prove("import", "lm-eval", "out", timeout=60)
    assert_clean_error(result, 1, "is a FIFO (named pipe), not a log file")
    _no_store(workdir)


def test_a_fifo_is_refused_when_opened_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ProveError, match="is a FIFO"), open_regular(fifo):
        pass
    with pytest.raises(ProveError, match="is a FIFO"):
        file_sha256(fifo)
    with pytest.raises(ProveError, match="does not exist"), open_regular(tmp_path / "missing"):
        pass


def _with_member(log: Path, out: Path, data: bytes, method: int, declared: int | None = None) -> Path:
    """A copy of a real .eval log with one more member, `samples/q0_epoch_9.json`, whose
    central directory and local header then declare `declared` bytes (a lie, when given)."""
    shutil.copy(log, out)
    name = "samples/q0_epoch_9.json"
    with zipfile.ZipFile(out, "a") as archive:
        archive.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    if declared is not None:
        raw = bytearray(out.read_bytes())
        central = raw.rfind(b"PK\x01\x02")
        assert raw[central + 46 : central + 46 + len(name)] == name.encode()
        raw[central + 24 : central + 28] = declared.to_bytes(4, "little")
        local = raw.rfind(b"PK\x03\x04" + bytes(raw[central + 6 : central + 8]), 0, central)
        raw[local + 22 : local + 26] = declared.to_bytes(4, "little")
        out.write_bytes(bytes(raw))
    return out


def test_members_declaring_more_than_the_limits_are_refused_before_inflating(
    prove: CLI, workdir: Path, tmp_path: Path, inspect_logs: dict[str, Path]
) -> None:
    log = inspect_logs["after"]
    big = _with_member(log, tmp_path / "big.eval", b"{}", zipfile.ZIP_DEFLATED, declared=300 << 20)
    result = prove("import", "inspect", str(big))
    assert_clean_error(
        result,
        1,
        f"{big} is refused before it is inflated: member samples/q0_epoch_9.json declares 300.0 MiB",
    )
    shutil.copy(log, tmp_path / "many.eval")
    with zipfile.ZipFile(tmp_path / "many.eval", "a") as archive:
        for i in range(5):
            archive.writestr(f"samples/extra_{i}.json", b"{}", compress_type=zipfile.ZIP_DEFLATED)
    raw = bytearray((tmp_path / "many.eval").read_bytes())
    at = 0
    while (at := raw.find(b"PK\x01\x02", at + 1)) > 0:
        if raw[at + 46 : at + 52] == b"sample" and b"extra_" in raw[at + 46 : at + 70]:
            raw[at + 24 : at + 28] = (250 << 20).to_bytes(4, "little")
    (tmp_path / "many.eval").write_bytes(bytes(raw))
    result = prove("import", "inspect", str(tmp_path / "many.eval"))
    assert_clean_error(result, 1, "its members declare more than 1,024.0 MiB")
    _no_store(workdir)


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, 93], ids=["deflate", "zstd"])
def test_a_member_inflating_past_its_declared_size_is_refused_while_inflating(
    prove: CLI, workdir: Path, tmp_path: Path, inspect_logs: dict[str, Path], method: int
) -> None:
    bomb = _with_member(
        inspect_logs["after"], tmp_path / "bomb.eval", b" " * (64 << 20), method, declared=100
    )
    assert bomb.stat().st_size < (inspect_logs["after"].stat().st_size + (1 << 20))  # small on disk
    result = prove("import", "inspect", str(bomb))
    assert_clean_error(result, 1, "member samples/q0_epoch_9.json inflates past its declared 100 bytes")
    _no_store(workdir)


def test_an_honest_archive_passes_and_a_declared_size_past_the_limit_inflates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    honest = tmp_path / "honest.eval"
    with zipfile.ZipFile(honest, "w") as archive:
        for name, method in (
            ("a.json", zipfile.ZIP_DEFLATED),
            ("b.json", zipfile.ZIP_STORED),
            ("c.json", 93),
        ):
            archive.writestr(name, name.encode() * 5000, compress_type=method)
    check_eval_archive(honest)
    produced: list[int] = []
    real = logfiles._inflated_chunks

    def counting(path: Path, handle: BinaryIO, info: zipfile.ZipInfo) -> Iterator[bytes]:
        for chunk in real(path, handle, info):
            produced.append(len(chunk))
            yield chunk

    monkeypatch.setattr(logfiles, "_inflated_chunks", counting)
    check_eval_archive(honest)
    assert sum(produced) == 3 * 6 * 5000  # every member inflated once, to its size
    produced.clear()
    monkeypatch.setattr(logfiles, "MAX_MEMBER_BYTES", 20_000)
    with pytest.raises(ProveError, match=r"member a\.json declares 30,000 bytes"):
        check_eval_archive(honest)
    assert produced == []  # refused by what it declares: nothing inflated
    stored = tmp_path / "stored.eval"
    with zipfile.ZipFile(stored, "w") as archive:
        archive.writestr("d.json", b"d" * 5000, compress_type=zipfile.ZIP_STORED)
    raw = bytearray(stored.read_bytes())
    central = raw.rfind(b"PK\x01\x02")
    raw[central + 24 : central + 28] = (100).to_bytes(4, "little")
    stored.write_bytes(bytes(raw))
    with pytest.raises(ProveError, match="inflates past its declared 100 bytes"):
        check_eval_archive(stored)
