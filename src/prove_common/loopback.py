"""The one rule both local servers (`dashboard --serve`, `proveai engine serve`) answer by: bound
to 127.0.0.1 only, and a request whose Host or Origin names another machine is refused.

A browser sends the Host it was pointed at: a page elsewhere that rebinds its own name to
127.0.0.1 (DNS rebinding) arrives with that name, not one of these, and is refused.
"""

from __future__ import annotations

from urllib.parse import urlsplit

HOST = "127.0.0.1"  # never another interface: neither server has authentication
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost"})  # what a local client's Host names


def host_name(authority: str) -> str:
    """The host of a Host header value (`127.0.0.1:19000` -> `127.0.0.1`, `[::1]:80` -> `[::1]`)."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def is_loopback_host(value: str) -> bool:
    """True when a Host header names this machine (127.0.0.1 or localhost, any port)."""
    return host_name(value) in LOOPBACK_NAMES


def is_loopback_origin(value: str) -> bool:
    """True when an Origin header is an http(s) page of this machine."""
    origin = urlsplit(value.strip())
    return origin.scheme in ("http", "https") and (origin.hostname or "") in LOOPBACK_NAMES
