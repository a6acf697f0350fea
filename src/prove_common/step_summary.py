"""The GitHub Actions run page: a Markdown step summary and workflow-command annotations.

Both command lines' CI gates (`proveai snapshot verify`, `poisson-prove check`) write what
they found where GitHub shows it: Markdown tables appended to `$GITHUB_STEP_SUMMARY`, and
`::warning file=...,title=...::message` lines that GitHub turns into annotations on the run
and the pull request. This module writes the shared parts (cells that render as the text they
hold, tables, the append, the workflow-command escaping); each gate decides what goes in them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

_MD_SPECIAL = str.maketrans({c: f"&#{ord(c)};" for c in "|<>&`*[]\\"})


def md_cell(text: object) -> str:
    """A table cell that renders as the text it holds: names, labels and rationales are
    untrusted (HTML, links, emphasis or a `|` would change the page), so every character
    Markdown or HTML gives a meaning to becomes an HTML entity, and whitespace runs (newlines
    too) become one space."""
    return " ".join(str(text).split()).translate(_MD_SPECIAL)


def md_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table's lines: the header, the `---` rule, one line per row, every cell
    through `md_cell`."""
    lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |"]
    lines.append("| " + " | ".join("---" for _ in headers) + " |")
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return lines


def append_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> str | None:
    """Append `markdown` to $GITHUB_STEP_SUMMARY when it is set.

    Returns None, or what went wrong in words: a summary that cannot be written must not
    change a gate's verdict, so it is a warning for the caller to show, never an error.
    """
    path = (os.environ if env is None else env).get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(markdown)
    except OSError as exc:
        return f"could not write $GITHUB_STEP_SUMMARY ({path}): {exc.strerror}"
    return None


def in_github_actions(env: Mapping[str, str] | None = None) -> bool:
    """True on a GitHub Actions runner (it sets GITHUB_ACTIONS=true): annotations only there,
    where a `::warning` line is a command, not noise in someone's terminal."""
    return (os.environ if env is None else env).get("GITHUB_ACTIONS") == "true"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, *, title: str | None = None, file: str | None = None) -> str:
    """One workflow-command line (`::warning file=F,title=T::message`), escaped as GitHub's
    workflow commands require (`%`, CR and LF in the message; also `:` and `,` in a property),
    so no name or message can end the command early or start another."""
    if level not in ("notice", "warning", "error"):
        raise ValueError(f"an annotation is a notice, warning or error, not {level!r}")
    props = [f"{key}={_escape_property(value)}" for key, value in (("file", file), ("title", title)) if value]
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{_escape_data(message)}"
