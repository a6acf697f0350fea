"""Reading the dashboard back: its tags, attributes and numbered rows, with html.parser."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


def comparison_rows(html: str, which: int = 0) -> list[dict[str, str | None]]:
    """The numbered rows (tr with data-outcome) of the `which`-th comparison on the page."""
    found: list[list[dict[str, str | None]]] = []
    for tag, attrs in tags(html):
        if tag == "details" and attrs.get("class") == "comparison":
            found.append([])
        elif tag == "tr" and "data-outcome" in attrs and found:
            found[-1].append(attrs)
    return found[which]


def number(text: str | None) -> float | None:
    return json.loads(text) if text is not None else None


def read(store: Path) -> str:
    return (store / "dashboard.html").read_text(encoding="utf-8")


def assert_only_the_fixed_script(html: str) -> None:
    """The page's one script is dashboard.js as shipped (nothing of the store inside it), and
    the Content-Security-Policy allows exactly it, by the SHA-256 of its text computed here."""
    import base64  # only the pages with a script check it
    import hashlib  # only the pages with a script check it
    import re  # only the pages with a script check it

    source = Path(__file__).resolve().parents[3] / "src/poisson_prove/dashboard/dashboard.js"
    shipped = source.read_text("utf-8")
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert [(attrs, text) for attrs, text in scripts] == [("", shipped)]
    digest = base64.b64encode(hashlib.sha256(shipped.encode("utf-8")).digest()).decode("ascii")
    csp = next(a for t, a in tags(html) if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    policy = dict(part.strip().split(" ", 1) for part in (csp["content"] or "").split(";") if part.strip())
    assert policy["script-src"] == f"'sha256-{digest}'" and policy["default-src"] == "'none'"
    assert "connect-src" not in policy  # nothing to fetch from: default-src 'none' holds
