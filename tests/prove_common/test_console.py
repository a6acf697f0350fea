"""is_pretty works with any parser, --plain or not (proveai status never defined --plain)."""

from __future__ import annotations

import argparse
import io
import os
import pty
from collections.abc import Iterator

import pytest

from prove_common.console import format_count, is_pretty, wants_color


@pytest.fixture
def terminal() -> Iterator[io.TextIOWrapper]:
    leader, follower = pty.openpty()
    stream = open(follower, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        yield stream
    finally:
        stream.close()
        os.close(leader)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def test_a_terminal_is_pretty_whether_or_not_the_parser_defined_plain(terminal: io.TextIOWrapper) -> None:
    assert is_pretty(argparse.Namespace(), terminal)
    assert is_pretty(argparse.Namespace(plain=False), terminal)
    assert not is_pretty(argparse.Namespace(plain=True), terminal)


def test_a_pipe_no_color_and_a_dumb_terminal_are_plain(
    terminal: io.TextIOWrapper, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not is_pretty(argparse.Namespace(), io.StringIO())
    monkeypatch.setenv("TERM", "dumb")
    assert not is_pretty(argparse.Namespace(), terminal)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not is_pretty(argparse.Namespace(), terminal)


def test_wants_color(monkeypatch: pytest.MonkeyPatch) -> None:
    assert wants_color(argparse.Namespace())
    assert not wants_color(argparse.Namespace(no_color=True))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color(argparse.Namespace())


def test_format_count() -> None:
    assert format_count(1746) == "1,746"
