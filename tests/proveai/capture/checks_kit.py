"""A one-agent pipeline run under a list of checks, shared by the check tests."""

from __future__ import annotations

from proveai import monitor, trace


@monitor("classify")
def classify(text: str) -> str:
    return text


def run(output: str, checks: list) -> object:
    with trace("checks", checks=checks) as t:
        classify(output)
    return t


def labels(t) -> dict[str, str]:
    return {r.name: r.label for r in t.check_results}
