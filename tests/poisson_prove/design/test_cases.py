"""A case axis's ids read from a file: the three kinds, read bounded (a regular file of at most
the documented size), unique and non-empty, and a stored spec's case axis found by name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from poisson_prove.design.cases import (
    MAX_CASES_FILE_BYTES,
    CasesError,
    case_text,
    check_case_values,
    read_case_ids,
)
from poisson_prove.design.spec import case_axis_of
from poisson_prove.errors import ProveError


def _file(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def test_a_txt_file_is_one_id_per_line_without_blanks_or_comments(tmp_path: Path) -> None:
    path = _file(tmp_path, "t.txt", "# tickets\n t1 \n\nt2\r\n#t3\nt 4\n")
    assert read_case_ids(path, None) == ("t1", "t2", "t 4")


def test_a_jsonl_file_gives_the_column_of_each_object(tmp_path: Path) -> None:
    lines = [{"id": "a", "x": 1}, {"id": 7, "x": 2}, {"id": " b ", "x": 3}]
    text = "\n".join(json.dumps(line) for line in lines) + "\n\n"
    assert read_case_ids(_file(tmp_path, "s.jsonl", text), "id") == ("a", "7", " b ")


def test_a_csv_file_gives_its_named_column(tmp_path: Path) -> None:
    path = _file(tmp_path, "s.csv", 'topic, id\nbilling, a1\n\nshipping,"a,2"\n')
    assert read_case_ids(path, "id") == ("a1", "a,2")


def test_a_byte_order_mark_is_allowed(tmp_path: Path) -> None:
    path = _file(tmp_path, "bom.csv", "\ufeffid\nx\ny\n".encode())
    assert read_case_ids(path, "id") == ("x", "y")


@pytest.mark.parametrize(
    ("name", "data", "column", "fragment"),
    [
        ("t.txt", "a\nb\na\n", None, "repeats the case id 'a' (lines 1 and 3)"),
        ("t.txt", "# nothing\n\n", None, "holds no case ids"),
        ("t.txt", "a\n", "id", "column is for .jsonl and .csv files"),
        ("t.tsv", "a\n", None, "is not a .txt, .jsonl or .csv file"),
        ("s.jsonl", '{"id": "a"}\n', None, "column must name the field"),
        ("s.jsonl", '{"id": "a"}\n{"id": \n', "id", "line 2 is not JSON"),
        ("s.jsonl", '{"id": "a"}\n["b"]\n', "id", "line 2 is not a JSON object"),
        ("s.jsonl", '{"ids": "a"}\n', "id", "line 1 has no field 'id' (did you mean \"ids\"?)"),
        ("s.jsonl", '{"id": 1.5}\n', "id", "the id 'id' is 1.5, not a name or an integer"),
        ("s.jsonl", '{"id": true}\n', "id", "the id 'id' is True, not a name or an integer"),
        ("s.jsonl", '{"id": "  "}\n', "id", "line 1: the case id is empty"),
        ("s.jsonl", '{"id": 1}\n{"id": "1"}\n', "id", "repeats the case id '1' (lines 1 and 2)"),
        ("s.csv", "name\na\n", "id", "has no column 'id'"),
        ("s.csv", "a,id\n1\n", "id", "line 2 has no field 'id'"),
        ("s.csv", "id\na\n  \n", "id", "line 3: the case id is empty"),
        ("t.txt", b"a\n\xff\n", None, "is not UTF-8 text (byte 2)"),
    ],
)
def test_bad_case_files_are_refused_naming_the_file_and_line(
    tmp_path: Path, name: str, data: str | bytes, column: str | None, fragment: str
) -> None:
    path = _file(tmp_path, name, data)
    with pytest.raises(CasesError) as caught:
        read_case_ids(path, column)
    assert fragment in caught.value.message, caught.value.message
    if "line" in fragment or "repeats" in fragment:
        assert str(path) in caught.value.message


def test_only_a_regular_file_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "ids.txt"
    os.mkfifo(fifo)  # no writer: opening it for reading would block without O_NONBLOCK
    with pytest.raises(CasesError, match="is not a regular file"):
        read_case_ids(fifo, None)
    zero = tmp_path / "zero.txt"
    zero.symlink_to("/dev/zero")  # endless: refused before a byte is read
    with pytest.raises(CasesError, match="is not a regular file"):
        read_case_ids(zero, None)
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    with pytest.raises(CasesError, match="is a folder"):
        read_case_ids(folder, None)
    with pytest.raises(CasesError, match="no file"):
        read_case_ids(tmp_path / "missing.txt", None)


def test_a_file_past_the_documented_size_is_refused_unread(tmp_path: Path) -> None:
    assert MAX_CASES_FILE_BYTES == 64 * 1024 * 1024  # docs/sweep-spec.md says 64 MiB
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(MAX_CASES_FILE_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(CasesError, match="larger than 64 MiB"):
        read_case_ids(big, None)
    exact = tmp_path / "exact.txt"
    exact.write_bytes(b"a\n" + b" " * (MAX_CASES_FILE_BYTES - 2))
    assert read_case_ids(exact, None) == ("a",)


def test_inline_case_ids_are_names_or_integers_unique_as_text() -> None:
    assert check_case_values(["a", 2, "b"]) == ("a", 2, "b")
    assert [case_text(v) for v in ("a", 2)] == ["a", "2"]
    for bad, fragment in (
        ([1, "1"], "given twice"),
        (["a", 0.5], "got 0.5"),
        ([True], "got True"),
        ([""], "empty"),
    ):
        with pytest.raises(CasesError, match=fragment):
            check_case_values(bad)


def test_case_axis_of_a_stored_spec() -> None:
    spec = {"axes": {"model": {"type": "categorical", "values": ["a"]}, "sample": {"cases": True}}}
    assert case_axis_of(spec) == "sample"
    assert case_axis_of({"axes": {"x": {"type": "categorical", "values": [1], "cases": False}}}) is None
    assert case_axis_of({"axes": {"x": {"cases": "true"}}}) is None  # only the TOML/JSON boolean true
    assert case_axis_of({}) is None and case_axis_of(None) is None and case_axis_of({"axes": []}) is None
    with pytest.raises(ProveError, match=r"2 case axes \(a, b\)"):
        case_axis_of({"axes": {"a": {"cases": True}, "b": {"cases": True}}})
