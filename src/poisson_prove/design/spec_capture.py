"""The sweep spec's [capture] table: OpenTelemetry instrumentors to switch on for each episode,
whether their content is kept and up to how many bytes, and proveai checks run on each
`@monitor` call ("json_valid", "module:callable", each optionally "@agent")."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.machinery import PathFinder
from typing import Any

from poisson_prove.design.spec_where import Where, check_keys, is_target_ref
from prove_common.suggest import did_you_mean

CAPTURE_KEYS = ("instrument", "content", "max_observation_bytes", "checks")
#: [capture] checks: proveai's checks that need no argument but the agent (proveai.capture.episode)
BUILTIN_CHECKS = ("json_valid",)
# a check: a built-in name or "module:callable", then "@agent" for one agent's calls only
_CHECK_RE = re.compile(r"^(?P<check>[^@\s]+?)(?:@(?P<agent>[^@\s]+))?$")


@dataclass(frozen=True)
class Capture:
    """The [capture] table: OpenTelemetry instrumentors to switch on, and what is kept."""

    instrument: tuple[str, ...] = ()
    content: bool = False
    max_observation_bytes: int | None = None
    checks: tuple[str, ...] = ()  # proveai checks run on each @monitor call: "json_valid", "m:f@agent"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "instrument": list(self.instrument),
            "content": self.content,
            "max_observation_bytes": self.max_observation_bytes,
        }
        if self.checks:  # a run without them keeps the manifest it always had
            out["checks"] = list(self.checks)
        return out


def parse_capture(where: Where, data: Any) -> Capture:
    if not isinstance(data, Mapping):
        raise where.error("", "capture", "[capture] must be a table")
    check_keys(where, "capture", data, CAPTURE_KEYS)
    instrument = data.get("instrument", [])
    if not isinstance(instrument, list) or not all(isinstance(v, str) and v for v in instrument):
        raise where.error(
            "capture", "instrument", f"capture.instrument must be a list of names, got {instrument!r}"
        )
    content = data.get("content", False)
    if not isinstance(content, bool):
        raise where.error("capture", "content", f"capture.content must be true or false, got {content!r}")
    limit = data.get("max_observation_bytes")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0):
        raise where.error(
            "capture",
            "max_observation_bytes",
            f"capture.max_observation_bytes must be a positive integer, got {limit!r}",
        )
    if instrument and limit is None:
        raise where.error(
            "capture",
            None,
            "[capture] names instrumentors but no max_observation_bytes (it has no default)",
            next_=["add max_observation_bytes = 16384 to [capture]"],
        )
    checks = _capture_checks(where, data.get("checks", []))
    return Capture(tuple(dict.fromkeys(instrument)), content, limit, checks)


def _capture_checks(where: Where, value: Any) -> tuple[str, ...]:
    """[capture] checks: each a built-in check's name or "module:callable", optionally
    "@agent" (that agent's calls only); the module's package is found, not imported."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(
            "capture", "checks", f'capture.checks must be a list of check names, got {value!r}',
            next_=['checks = ["json_valid@draft"]'],
        )
    for entry in value:
        found = _CHECK_RE.match(entry)
        check = found.group("check") if found else ""
        if not found or (":" not in check and check not in BUILTIN_CHECKS):
            hint = did_you_mean(check or entry, BUILTIN_CHECKS)
            raise where.error(
                "capture", "checks",
                f"capture.checks: unknown check {entry!r}{hint}",
                next_=[
                    f"a check is one of {', '.join(BUILTIN_CHECKS)} or \"module:callable\", then "
                    "\"@agent\" for one agent's calls (e.g. \"json_valid@draft\")"
                ],
            )
        if ":" in check:
            if not is_target_ref(check):
                raise where.error(
                    "capture", "checks",
                    f"capture.checks: {check!r} is not \"module:callable\" (a dotted module, a name)",
                )
            module = check.split(":", 1)[0]
            top = module.split(".", 1)[0]  # the episode imports it with the spec's folder first on sys.path
            if PathFinder.find_spec(top, [str(where.path.parent), *sys.path]) is None:
                raise where.error(
                    "capture", "checks",
                    f"capture.checks: no module named {module!r} (for the check {entry!r})",
                    next_=["install it, or run the sweep from the folder that holds it"],
                )
    return tuple(dict.fromkeys(value))
