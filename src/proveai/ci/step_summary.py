"""The verify's verdict tables on the GitHub Actions run page: appended to $GITHUB_STEP_SUMMARY.

The markdown is drawn by proveai.render.verify.step_summary_markdown; this module knows only
where GitHub Actions reads it from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def write_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> str | None:
    """Append `markdown` to $GITHUB_STEP_SUMMARY when it is set.

    Returns None, or what went wrong in words: a summary that cannot be written must not
    change the gate's verdict, so it is a warning for the caller to show, never an error.
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
