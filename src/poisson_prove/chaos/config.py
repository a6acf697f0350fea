"""The [chaos] table: validated into plain dicts (they travel in the Job and the manifest).

    [[chaos.faults]]
    kind = "http_status"      # http_status | latency | timeout | connection_error
                              # | connection_reset | malformed_body
    rate = 0.05               # share of matching calls hit, in [0, 1]
    # rate_axis = "fail_rate" # or: the rate is this axis's value in each condition
    status = 503              # http_status only: 400-599
    seconds = 2.0             # latency (required), timeout (optional wait before raising)
    hosts = ["api.openai.com"]  # optional: only calls to these hosts
    paths = ["/v1/chat"]      # optional: only calls whose path starts with one of these
    name = "openai-503"       # optional: the fault's name in the store (default: kind[_status])

    [chaos]
    seed = 7                  # optional integer mixed into every decision
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from poisson_prove.chaos.inject import CLIENTS, ChaosScope
from poisson_prove.errors import ProveError
from prove_common.suggest import did_you_mean

CHAOS_KEYS = ("faults", "seed")
FAULT_KINDS = ("http_status", "latency", "timeout", "connection_error", "connection_reset", "malformed_body")
FAULT_KEYS = ("kind", "rate", "rate_axis", "status", "seconds", "hosts", "paths", "name")
# Backends whose episodes run in a Python process Prove starts and whose code path it tests.
SUPPORTED_BACKENDS = ("local", "dask", "ray")

ErrorAt = Callable[..., ProveError]  # (table, key, message, next_=...) -> ProveError


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def default_name(fault: Mapping[str, Any]) -> str:
    kind = str(fault["kind"])
    return f"{kind}_{fault['status']}" if kind == "http_status" else kind


def _fault(error: ErrorAt, number: int, fault: Any, axes: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    label = f"chaos.faults #{number}"
    if not isinstance(fault, Mapping):
        raise error("chaos", "faults", f"{label} must be a table with kind and rate")
    for key in fault:
        if key not in FAULT_KEYS:
            raise error(
                "chaos.faults",
                key,
                f"unknown key {key!r} in {label}{did_you_mean(key, FAULT_KEYS)}",
                next_=[f"the keys of [[chaos.faults]] are: {', '.join(FAULT_KEYS)}"],
            )
    kind = fault.get("kind")
    if kind not in FAULT_KINDS:
        raise error(
            "chaos.faults",
            "kind",
            f"{label}: kind must be one of {', '.join(FAULT_KINDS)}, got {kind!r}"
            f"{did_you_mean(str(kind), FAULT_KINDS)}",
        )
    out: dict[str, Any] = {"kind": kind}
    rate, rate_axis = fault.get("rate"), fault.get("rate_axis")
    if (rate is None) == (rate_axis is None):
        raise error("chaos.faults", "rate", f"{label}: give rate or rate_axis (one of them)")
    if rate is not None:
        if not _number(rate) or not 0 <= rate <= 1:
            raise error("chaos.faults", "rate", f"{label}: rate must be a number in [0, 1], got {rate!r}")
        out["rate"] = float(rate)
    else:
        if not isinstance(rate_axis, str) or rate_axis not in axes:
            raise error(
                "chaos.faults",
                "rate_axis",
                f"{label}: rate_axis {rate_axis!r} is not an axis of the spec"
                f"{did_you_mean(str(rate_axis), list(axes))}",
                next_=[f'add [axes.{rate_axis}] with type = "continuous" and the rates as values'],
            )
        bad = [v for v in axes[rate_axis] if not _number(v) or not 0 <= v <= 1]
        if bad:
            raise error(
                "chaos.faults",
                "rate_axis",
                f"{label}: axis {rate_axis!r} holds {bad[0]!r}; a rate axis's values must be in [0, 1]",
            )
        out["rate_axis"] = rate_axis
    status = fault.get("status")
    if kind == "http_status":
        if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599:
            raise error(
                "chaos.faults", "status", f"{label}: http_status needs status, 400 to 599, got {status!r}"
            )
        out["status"] = status
    elif status is not None:
        raise error("chaos.faults", "status", f"{label}: status is for http_status faults only")
    seconds = fault.get("seconds")
    if seconds is not None:
        if kind not in ("latency", "timeout"):
            raise error("chaos.faults", "seconds", f"{label}: seconds is for latency and timeout faults only")
        if not _number(seconds) or not 0 < seconds <= 3600:
            raise error(
                "chaos.faults", "seconds", f"{label}: seconds must be in (0, 3600], got {seconds!r}"
            )
        out["seconds"] = float(seconds)
    elif kind == "latency":
        raise error("chaos.faults", "kind", f"{label}: latency needs seconds")
    for key, what in (("hosts", "host names"), ("paths", "paths starting with /")):
        values = fault.get(key, [])
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            raise error("chaos.faults", key, f"{label}: {key} must be a list of {what}")
        if key == "paths" and any(not v.startswith("/") for v in values):
            raise error("chaos.faults", key, f"{label}: paths must start with /, got {values!r}")
        if values:
            out[key] = [v.lower() for v in values] if key == "hosts" else list(values)
    name = fault.get("name", default_name(out))
    if not isinstance(name, str) or not name.strip():
        raise error("chaos.faults", "name", f"{label}: name must be a non-empty string, got {name!r}")
    out["name"] = name
    return out


def parse_chaos(error: ErrorAt, data: Any, axes: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """The validated [chaos] table: {"faults": [...], "seed"?: int}; `axes` maps axis -> values."""
    if not isinstance(data, Mapping):
        raise error("", "chaos", "[chaos] must be a table")
    for key in data:
        if key not in CHAOS_KEYS:
            raise error(
                "chaos",
                key,
                f"unknown key {key!r} in [chaos]{did_you_mean(key, CHAOS_KEYS)}",
                next_=[f"the keys of [chaos] are: {', '.join(CHAOS_KEYS)}"],
            )
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise error("chaos", "seed", f"chaos.seed must be an integer, got {seed!r}")
    faults = data.get("faults", [])
    if not isinstance(faults, list):
        raise error("chaos", "faults", "chaos.faults must be a list of tables ([[chaos.faults]])")
    checked = [_fault(error, number, fault, axes) for number, fault in enumerate(faults, start=1)]
    names = [f["name"] for f in checked]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise error(
            "chaos.faults",
            "name",
            f"two faults are both named {repeated[0]!r}",
            next_=['give each [[chaos.faults]] its own name = "..."'],
        )
    out: dict[str, Any] = {"faults": checked}
    if seed is not None:
        out["seed"] = seed
    return out


def check_backend(chaos: Mapping[str, Any], backend: str) -> None:
    """Refuse a backend where faults could not be injected (or checked) in the rollout's process."""
    if chaos.get("faults") and backend not in SUPPORTED_BACKENDS:
        raise ProveError(
            f"[chaos] cannot inject faults on --backend {backend}: its rollouts run in containers "
            f"this version does not start or check; faults are injected on {', '.join(SUPPORTED_BACKENDS)}",
            suggestions=["sweep with --backend local (or dask, ray), or remove the [chaos] table"],
        )


def job_chaos(chaos: Mapping[str, Any], salt: str) -> ChaosScope | None:
    """The episode scope a worker enters around each call: the faults, the chaos seed and the
    run's salt (None without faults: nothing around the call)."""
    if not chaos.get("faults"):
        return None
    return ChaosScope({"faults": [dict(f) for f in chaos["faults"]], "seed": chaos.get("seed"), "salt": salt})


def describe_fault(fault: Mapping[str, Any]) -> str:
    """`http_status 503 at 0.05 on api.openai.com/v1`, as the plan prints it."""
    kind = fault["kind"]
    what = f"{kind} {fault['status']}" if kind == "http_status" else str(kind)
    if "seconds" in fault:
        what += f" {fault['seconds']:g} s"
    rate = f"at {fault['rate']:g}" if "rate" in fault else f"at the {fault['rate_axis']} axis's rate"
    where = ""
    if fault.get("hosts") or fault.get("paths"):
        where = " on " + ", ".join([*fault.get("hosts", []), *fault.get("paths", [])])
    name = "" if fault["name"] == default_name(fault) else f" ({fault['name']})"
    return f"{what}{name} {rate}{where}"


def chaos_summary(chaos: Mapping[str, Any]) -> dict[str, Any]:
    """The [chaos] table as the `--json` plan and a new run's manifest show it: the faults, each
    one's description, the clients chaos can fault and how calls are chosen. `injected` (the
    run's and each fault's) is false here: it says what happened, and nothing has yet; once the
    episodes are stored, `reach.chaos_after_run` sets it from the calls they faulted."""
    if not chaos.get("faults"):
        return {}

    return {
        **{k: v for k, v in chaos.items() if k != "faults"},
        "faults": [{**f, "injected": False, "description": describe_fault(f)} for f in chaos["faults"]],
        "injected": False,
        "clients": list(CLIENTS),
        "decision": "blake2b keyed by the run salt and chaos seed, of (episode seed, call index, fault name)",
    }
