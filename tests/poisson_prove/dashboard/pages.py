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
