"""A benchmark's cases: the ids of the spec's case axis, inline or read from a file beside it.

One categorical axis of a spec may be its cases (`cases = true`): tickets, dataset samples,
tasks, each run a few times. Its ids are `values`, or `values_from` a file beside the spec:

- `.txt`: one id per line, each stripped; blank lines and lines starting with `#` skipped;
- `.jsonl`: one JSON object per line (blank lines skipped); the id is the field `column`, a
  string (taken as it is) or an integer (read as its decimal text);
- `.csv`: a header row that names `column`; the id is that field of each row, stripped.

The file is read bounded: it must be a regular file (a FIFO, a device such as /dev/zero, a
socket or a folder is refused, and it is opened without blocking, so a FIFO with no writer
cannot hang the sweep) of at most `MAX_CASES_FILE_BYTES`, in UTF-8 (a byte-order mark is
allowed). Its ids must be non-empty and unique. A case's id as stored with every episode
(`case_id`) is `case_text(value)`. Errors are `CasesError`, which design.spec turns into an
`error:` line naming the spec, the key and the file.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from prove_common.files import FileTooLarge, NotRegularFile, read_regular_bytes
from prove_common.suggest import did_you_mean

#: The largest file `values_from` reads (64 MiB: a million ids of 60 bytes, or a dataset's
#: JSONL with its prompts); a larger one is refused before it is read.
MAX_CASES_FILE_BYTES = 64 * 1024 * 1024
#: The kinds of file `values_from` reads, by suffix.
CASE_FILE_KINDS = (".txt", ".jsonl", ".csv")


#: How the spec reports a mistake: error(table, key, message, next_=[...]) gives the exception
#: to raise, its text prefixed with the spec's file and the key's line (design.spec_where.Where.error).
SpecError = Callable[..., Exception]


class CasesError(ValueError):
    """A case axis's ids cannot be used: `message` says why, `next_` how to fix it."""

    def __init__(self, message: str, next_: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.next_ = tuple(next_)


def case_text(value: Any) -> str:
    """A case value as the text stored in every episode's `case_id`: a name as it is, an
    integer as its decimal digits."""
    return value if isinstance(value, str) else str(value)


def check_case_values(values: Iterable[Any]) -> tuple[Any, ...]:
    """Inline case ids: each a non-empty name or an integer, unique as text."""
    out: list[Any] = []
    seen: set[str] = set()
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise CasesError(f"a case id is a name or an integer, got {value!r}")
        text = case_text(value)
        if not text.strip():
            raise CasesError("a case id is empty")
        if text in seen:
            raise CasesError(f"the case id {text!r} is given twice")
        seen.add(text)
        out.append(value)
    return tuple(out)


def parse_case_axis(
    error: SpecError, qual: str, table: Mapping[str, Any], kind: str, folder: Path, *, stored: bool
) -> tuple[tuple[Any, ...], str | None] | None:
    """The ids of the axis table `qual` (`axes.NAME`) and the file they came from (as written),
    or None when it is not the spec's cases. `folder` is the spec's: `values_from` is read from
    there, unless `stored` (a manifest's spec, whose `values` hold the ids once read)."""
    cases = table.get("cases", False)
    if not isinstance(cases, bool):
        raise error(qual, "cases", f"{qual}.cases must be true or false, got {cases!r}")
    if cases and kind != "categorical":
        raise error(
            qual,
            "cases",
            f'{qual}.cases = true needs type = "categorical" (case ids are names), got {kind!r}',
            next_=[f'set type = "categorical" in [{qual}]: integer ids are allowed there'],
        )
    source, column = table.get("values_from"), table.get("column")
    no_file = f"{qual}.column names the id's field of a values_from file; there is none"
    if not cases:
        if source is not None:
            raise error(
                qual,
                "values_from",
                f"{qual}.values_from reads a benchmark's case ids, and [{qual}] is not the spec's cases",
                next_=[f"add cases = true to [{qual}], or give its values inline"],
            )
        if column is not None:
            raise error(qual, "column", no_file)
        return None
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise error(
            qual, "values_from", f"{qual}.values_from must name a file beside the spec, got {source!r}"
        )
    if column is not None and (not isinstance(column, str) or not column):
        raise error(qual, "column", f"{qual}.column must name a field, got {column!r}")
    if column is not None and source is None:
        raise error(qual, "column", no_file)
    inline = table.get("values")
    if source is not None and not stored:
        if inline is not None:
            raise error(
                qual,
                "values_from",
                f"[{qual}] has both values and values_from",
                next_=['give the case ids one way: values = [...] or values_from = "FILE"'],
            )
        try:
            return read_case_ids(folder / source, column), source
        except CasesError as err:
            raise error(qual, "values_from", f"{qual}.values_from: {err.message}", next_=err.next_) from None
    if inline is None:
        raise error(
            qual,
            None,
            f"[{qual}] has no values",
            next_=['give the case ids as values = [...] or values_from = "cases.txt"'],
        )
    if not isinstance(inline, list):
        raise error(qual, "values", f"{qual}.values must be a list, got {inline!r}")
    if not inline:
        raise error(qual, "values", f"{qual}.values is empty: an axis needs at least one value")
    try:
        return check_case_values(inline), source
    except CasesError as err:
        raise error(qual, "values", f"{qual}.values: {err.message}", next_=err.next_) from None


def read_case_ids(path: Path, column: str | None) -> tuple[str, ...]:
    """The case ids of the file at `path` (see the module's docstring); CasesError otherwise."""
    kind = path.suffix.lower()
    if kind not in CASE_FILE_KINDS:
        raise CasesError(
            f"{path} is not a .txt, .jsonl or .csv file",
            next_=['name a .txt file (one id per line), or a .jsonl or .csv file with column = "id"'],
        )
    if kind == ".txt" and column is not None:
        raise CasesError(
            f"column is for .jsonl and .csv files; {path} holds one id per line",
            next_=["remove column, or read the ids from a .jsonl or .csv file"],
        )
    if kind != ".txt" and column is None:
        raise CasesError(
            f"{path} is a {kind} file: column must name the field that holds each case's id",
            next_=['add column = "id" (the field\'s name) beside values_from'],
        )
    text = _read_text(path)
    if kind == ".txt":
        found = list(_txt_ids(text))
    elif kind == ".jsonl":
        found = list(_jsonl_ids(text, path, str(column)))
    else:
        found = list(_csv_ids(text, path, str(column)))
    if not found:
        raise CasesError(f"{path} holds no case ids", next_=["write one case id per case into it"])
    first_line: dict[str, int] = {}
    for line, case in found:
        if not case.strip():
            raise CasesError(f"{path} line {line}: the case id is empty")
        if case in first_line:
            raise CasesError(
                f"{path} repeats the case id {case!r} (lines {first_line[case]} and {line})",
                next_=["each case once: its repeats are the spec's replicates"],
            )
        first_line[case] = line
    return tuple(case for _, case in found)


def _read_text(path: Path) -> str:
    """The file's text, read bounded: a regular file of at most MAX_CASES_FILE_BYTES."""
    try:
        data = read_regular_bytes(path, limit=MAX_CASES_FILE_BYTES)
    except FileNotFoundError:
        raise CasesError(f"no file {path}", next_=["values_from is read from the spec's folder"]) from None
    except NotRegularFile as err:
        if err.kind == "a folder":
            raise CasesError(f"{path} is a folder, not a file of case ids") from None
        raise CasesError(
            f"{path} is not a regular file ({err.kind}); case ids are read from a file",
        ) from None
    except FileTooLarge:
        raise _too_large(path) from None
    except OSError as err:
        raise CasesError(f"cannot read {path}: {err.strerror or err}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise CasesError(f"{path} is not UTF-8 text (byte {err.start})") from None


def _too_large(path: Path) -> CasesError:
    return CasesError(
        f"{path} is larger than {MAX_CASES_FILE_BYTES // (1024 * 1024)} MiB, the most values_from reads",
        next_=["keep only the case ids (a .txt file, one per line)"],
    )


def _txt_ids(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        case = line.strip()
        if case and not case.startswith("#"):
            yield number, case


def _jsonl_ids(text: str, path: Path, column: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as err:
            raise CasesError(f"{path} line {number} is not JSON: {err}") from None
        if not isinstance(record, dict):
            raise CasesError(f"{path} line {number} is not a JSON object")
        if column not in record:
            raise CasesError(
                f"{path} line {number} has no field {column!r}{did_you_mean(column, list(record))}",
                next_=[f"column names the field that holds the id; line {number} has: {', '.join(record)}"],
            )
        value = record[column]
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise CasesError(
                f"{path} line {number}: the id {column!r} is {value!r}, not a name or an integer"
            )
        yield number, case_text(value)


def _csv_ids(text: str, path: Path, column: str) -> Iterator[tuple[int, str]]:
    reader = csv.reader(text.splitlines(), skipinitialspace=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        names = [name.strip() for name in header]
        if column not in names:
            raise CasesError(
                f"{path} has no column {column!r}{did_you_mean(column, names)}",
                next_=[f"its header names: {', '.join(names)}"],
            )
        at = names.index(column)
        for row in reader:
            if not row:
                continue
            if len(row) <= at:
                raise CasesError(f"{path} line {reader.line_num} has no field {column!r}")
            yield reader.line_num, row[at].strip()
    except csv.Error as err:
        raise CasesError(f"{path} line {reader.line_num} is not CSV: {err}") from None
