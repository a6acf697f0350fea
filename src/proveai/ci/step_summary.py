"""The verify's verdict tables on the GitHub Actions run page: appended to $GITHUB_STEP_SUMMARY.

The markdown is drawn by proveai.render.verify.step_summary_markdown (its tables through
prove_common.step_summary, the writer `poisson-prove check` uses too); this module knows only
where GitHub Actions reads it from.
"""

from __future__ import annotations

from collections.abc import Mapping

from prove_common.step_summary import append_step_summary


def write_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> str | None:
    """Append `markdown` to $GITHUB_STEP_SUMMARY when it is set.

    Returns None, or what went wrong in words: a summary that cannot be written must not
    change the gate's verdict, so it is a warning for the caller to show, never an error.
    """
    return append_step_summary(markdown, env)
