"""The files an import reads, read within bounds.

- A log is a regular file: a device (/dev/zero), a FIFO or a socket is refused before a byte is
  read, through the one reader of input files (`prove_common.files.open_regular`: opened without
  blocking, so a FIFO put in a log's place between the check and the open is refused too rather
  than waited on).
- An Inspect AI `.eval` log is a zip archive that Inspect's reader inflates whole, member by
  member, into memory. Before it does, `check_eval_archive` refuses an archive whose members
  *declare* more than MAX_MEMBER_BYTES each or MAX_INFLATED_BYTES together, then inflates every
  member itself, a chunk at a time, and refuses one that inflates past its declared size
  (declared sizes are only numbers in the file): nothing is inflated past what was declared, so
  never past the limits. A `.eval` that is not a zip at all (a log cut short loses the zip's
  directory, at its end) is refused there too, before Inspect's own import.
"""

from __future__ import annotations

import hashlib
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO, cast

from poisson_prove.errors import ProveError
from prove_common.files import NotRegularFile, file_kind
from prove_common.files import open_regular as open_input

MAX_INFLATED_BYTES = 1 << 30  # 1 GiB: all members of one .eval log, inflated
MAX_MEMBER_BYTES = 256 << 20  # 256 MiB: one member (a sample's transcript) inflated
CHUNK = 1 << 20

def not_regular(path: Path, mode: int) -> ProveError:
    return ProveError(
        f"{path} is {file_kind(mode)}, not a log file; an import reads regular files only",
        suggestions=["give the log files the tool wrote (or the folder holding them)"],
    )


@contextmanager
def open_regular(path: Path) -> Iterator[BinaryIO]:
    """`path` opened for reading in binary, refused (ProveError) unless it is a regular file."""
    with ExitStack() as stack:
        try:
            handle = stack.enter_context(open_input(path))
        except NotRegularFile as exc:
            raise not_regular(path, exc.mode) from None
        except FileNotFoundError:
            raise ProveError(f"{path} does not exist") from None
        except OSError as exc:
            raise ProveError(f"{path} cannot be read: {exc.strerror or exc}") from None
        yield handle


def check_regular(path: Path) -> None:
    """Refuse `path` (without opening it) unless it is a regular file, or a symlink to one."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ProveError(f"{path} does not exist") from None
    except OSError as exc:
        raise ProveError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise not_regular(path, mode)


def file_sha256(path: Path) -> str:
    """The SHA-256 of a regular file, read a block at a time."""
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a UTF-8 text file, streamed (never the whole file in memory)."""
    with open_regular(path) as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ProveError(f"line {number} of {path} is not UTF-8 text ({exc.reason})") from None


def read_small_text(path: Path, limit: int = 64 << 20) -> str | None:
    """A regular file's text when it is at most `limit` bytes; None when it is missing, is not
    a regular file, is larger, or is not UTF-8 (for files read only for what they add)."""
    try:
        with open_regular(path) as handle:
            data = handle.read(limit + 1)
    except ProveError:
        return None
    if len(data) > limit:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _size(n: int) -> str:
    return f"{n / (1 << 20):,.1f} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def _too_large(path: Path, what: str) -> ProveError:
    return ProveError(
        f"{path} is refused before it is inflated: {what} (an import inflates at most "
        f"{_size(MAX_MEMBER_BYTES)} a member and {_size(MAX_INFLATED_BYTES)} a log)",
        suggestions=["check where this .eval file came from; inspect eval writes logs far below these sizes"],
    )


def check_eval_archive(path: Path) -> None:
    """Refuse an `.eval` archive that would inflate past the limits (see the module docstring),
    or that is not a zip archive at all (a truncated log: its directory is at the end), which is
    every `.eval` Inspect writes: refused here, before Inspect's own import (~2 s) is paid.
    """
    with open_regular(path) as handle:
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise ProveError(
                f"{path} is not a readable Inspect AI log (not a zip archive, as a .eval log is: "
                f"{type(exc).__name__}: {exc}; a log cut short, or not a log)",
                suggestions=["give the .eval or .json files inspect eval wrote (its --log-dir)"],
            ) from exc
        with archive:
            members = archive.infolist()
            total = 0
            for info in members:
                if info.file_size > MAX_MEMBER_BYTES:
                    raise _too_large(path, f"member {info.filename} declares {_size(info.file_size)}")
                total += info.file_size
                if total > MAX_INFLATED_BYTES:
                    raise _too_large(path, f"its members declare more than {_size(MAX_INFLATED_BYTES)}")
            for info in members:
                _inflate_within(path, handle, info)


def _inflate_within(path: Path, handle: BinaryIO, info: zipfile.ZipInfo) -> None:
    """Inflate one member a chunk at a time, discarding the output; refuse it once the output
    passes the member's declared size (never more than one chunk past it is produced)."""
    produced = 0
    for chunk in _inflated_chunks(path, handle, info):
        produced += len(chunk)
        if produced > info.file_size:
            raise _too_large(
                path, f"member {info.filename} inflates past its declared {_size(info.file_size)}"
            )


# A zip member's local file header (APPNOTE 4.3.7): its signature and fixed size, before the
# name and extra field whose lengths it gives at bytes 26-29.
_LOCAL_HEADER_SIGNATURE = b"PK\x03\x04"
_LOCAL_HEADER_SIZE = 30


def _raw_member(path: Path, handle: BinaryIO, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """The member's compressed bytes, CHUNK at a time, as its local header places them."""
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER_SIZE)
    if len(header) != _LOCAL_HEADER_SIZE or header[:4] != _LOCAL_HEADER_SIGNATURE:
        raise ProveError(
            f"{path} is not a readable Inspect AI log (member {info.filename} has no local header)"
        )
    name_length = int.from_bytes(header[26:28], "little")
    extra_length = int.from_bytes(header[28:30], "little")
    handle.seek(info.header_offset + _LOCAL_HEADER_SIZE + name_length + extra_length)
    left = info.compress_size
    while left > 0:
        block = handle.read(min(CHUNK, left))
        if not block:
            break  # truncated: Inspect's reader says so
        left -= len(block)
        yield block


class _RawReader:
    """The member's compressed bytes as a file object (what zstandard's stream reader reads)."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks = blocks
        self._pending = b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._pending) < size:
            block = next(self._blocks, None)
            if block is None:
                break
            self._pending += block
        cut = len(self._pending) if size < 0 else size
        out, self._pending = self._pending[:cut], self._pending[cut:]
        return out


def _inflated_chunks(path: Path, handle: BinaryIO, info: zipfile.ZipInfo) -> Iterator[bytes]:
    raw = _raw_member(path, handle, info)
    method = info.compress_type
    if method == zipfile.ZIP_STORED:
        yield from raw
    elif method == zipfile.ZIP_DEFLATED:
        inflater = zlib.decompressobj(-15)
        try:
            for block in raw:
                data = inflater.decompress(block, CHUNK)
                yield data
                while inflater.unconsumed_tail:
                    yield inflater.decompress(inflater.unconsumed_tail, CHUNK)
        except zlib.error:
            return  # damaged: Inspect's reader says so
    elif method == 93:  # zstandard, what Inspect writes
        try:
            import zstandard  # inspect-ai's own dependency: only for .eval members it compressed
        except ImportError:
            return
        try:
            source = cast(BinaryIO, _RawReader(raw))  # a file object to the reader: it only calls read
            with zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True) as reader:
                for data in iter(lambda: reader.read(CHUNK), b""):
                    yield data
        except zstandard.ZstdError:
            return
    else:
        raise ProveError(
            f"{path} is not a readable Inspect AI log (member {info.filename} uses zip "
            f"compression method {method}, which Inspect does not write)"
        )
