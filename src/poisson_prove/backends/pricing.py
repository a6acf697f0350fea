"""The price table behind the plan's cost estimate (`$X (modal)`), and the estimate itself.

estimate = est_seconds x rollouts x (cpu x CPU price + memory GiB x memory price + GPU price).
Prices are USD per second, as the providers publish them; docs/backends.md lists the same
figures with the date they were read. Local, Dask and Ray cost nothing Prove can know ($0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from poisson_prove.errors import ProveError

PRICES_READ = "2026-11-29"  # the date the table below was read; see docs/backends.md
DEFAULT_EST_SECONDS = 10.0  # a deliberately high guess per episode when the spec gives none


@dataclass(frozen=True)
class PriceTable:
    provider: str
    cpu_per_core_s: float
    memory_per_gib_s: float
    gpu_per_s: Mapping[str, float]
    default_cpu: float  # cores reserved per container when the table names none
    default_memory_gib: float


PRICES: dict[str, PriceTable] = {
    # modal.com/pricing: per physical core, per GiB, per GPU, billed per second.
    "modal": PriceTable(
        provider="Modal",
        cpu_per_core_s=0.0000131,
        memory_per_gib_s=0.00000222,
        gpu_per_s={
            "T4": 0.000164,
            "L4": 0.000222,
            "A10G": 0.000306,
            "L40S": 0.000542,
            "A100": 0.000583,
            "A100-40GB": 0.000583,
            "A100-80GB": 0.000694,
            "H100": 0.001097,
        },
        default_cpu=0.125,
        default_memory_gib=0.125,
    ),
    # Burla runs on the user's own Google Cloud project: n2-standard on-demand (us-central1)
    # per vCPU and per GB, and the attached GPU's on-demand price.
    "burla": PriceTable(
        provider="Google Cloud (Burla)",
        cpu_per_core_s=0.031611 / 3600,
        memory_per_gib_s=0.004237 / 3600,
        gpu_per_s={
            "T4": 0.35 / 3600,
            "A100": 2.934 / 3600,
            "A100_40G": 2.934 / 3600,
            "A100_80G": 3.928 / 3600,
            "H100": 11.06 / 3600,
            "H100_80G": 11.06 / 3600,
        },
        default_cpu=1.0,
        default_memory_gib=4.0,
    ),
}


def _gpu_price(table: PriceTable, gpu: str, backend: str) -> float:
    """The per-second price of a GPU spec such as "A100-80GB" or "H100:2" (count after ':')."""
    name, _, count_text = gpu.partition(":")
    try:
        count = int(count_text) if count_text else 1
    except ValueError:
        raise ProveError(f"[{backend}] gpu {gpu!r}: the count after ':' must be a whole number") from None
    for known, price in table.gpu_per_s.items():
        if known.lower() == name.strip().lower():
            return price * count
    raise ProveError(
        f"[{backend}] gpu {gpu!r} is not in the price table",
        suggestions=[f"the GPUs priced for {backend}: {', '.join(table.gpu_per_s)}"],
    )


def _number(settings: Mapping[str, Any], key: str, default: float, backend: str) -> float:
    value = settings.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ProveError(f"[{backend}] {key} must be a number of at least 0, got {value!r}")
    return float(value)


def per_episode_usd(backend: str, settings: Mapping[str, Any]) -> float:
    """The estimated price of one episode on `backend` (0 for backends without a table)."""
    table = PRICES.get(backend)
    if table is None:
        return 0.0
    # Sub-tables are [modal.SECTION] images, whatever their name ([modal.gpu] is not a GPU).
    settings = {k: v for k, v in settings.items() if not isinstance(v, Mapping)}
    seconds = _number(settings, "est_seconds", DEFAULT_EST_SECONDS, backend)
    cpu = _number(settings, "cpu", table.default_cpu, backend)
    if backend == "modal":
        memory_gib = _number(settings, "memory", table.default_memory_gib * 1024, backend) / 1024
    else:
        memory_gib = _number(settings, "memory", table.default_memory_gib, backend)
    gpu = settings.get("gpu")
    gpu_rate = _gpu_price(table, str(gpu), backend) if gpu else 0.0
    rate = cpu * table.cpu_per_core_s + memory_gib * table.memory_per_gib_s + gpu_rate
    return seconds * rate


def estimate_usd(backend: str, rollouts: int, settings: Mapping[str, Any]) -> float:
    return max(0, rollouts) * per_episode_usd(backend, settings)
