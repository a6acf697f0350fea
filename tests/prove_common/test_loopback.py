"""The loopback rule of both local servers: which Host and Origin values name this machine."""

from __future__ import annotations

import pytest

from prove_common.loopback import host_name, is_loopback_host, is_loopback_origin


@pytest.mark.parametrize(
    ("value", "name"),
    [("127.0.0.1:19000", "127.0.0.1"), ("LocalHost", "localhost"), ("[::1]:80", "[::1]"), (" a.b:1 ", "a.b")],
)
def test_host_name_drops_the_port(value: str, name: str) -> None:
    assert host_name(value) == name


def test_only_127_0_0_1_and_localhost_are_this_machine() -> None:
    for value in ("127.0.0.1", "127.0.0.1:8765", "localhost:1", "LOCALHOST"):
        assert is_loopback_host(value), value
    for value in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example", "0.0.0.0", "[::1]", ""):
        assert not is_loopback_host(value), value
    for value in ("http://127.0.0.1:8765", "https://localhost"):
        assert is_loopback_origin(value), value
    for value in ("null", "file://", "http://evil.example", "ftp://127.0.0.1", "http://127.0.0.1.evil.example"):
        assert not is_loopback_origin(value), value
