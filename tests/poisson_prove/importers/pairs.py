"""Independent readers of the logs (plain json / zipfile) and McNemar by statsmodels."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from statsmodels.stats.contingency_tables import mcnemar


def inspect_scores(log: Path) -> dict[tuple[str, int], str]:
    """(sample id, epoch) -> the first scorer's value, for samples with a score."""
    if log.suffix == ".json":
        samples: list[dict[str, Any]] = json.loads(log.read_text())["samples"]
    else:
        with zipfile.ZipFile(log) as archive:
            samples = [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]
    return {
        (s["id"], s["epoch"]): next(iter(s["scores"].values()))["value"]
        for s in samples
        if s.get("scores") and not s.get("error")
    }


def lm_eval_scores(out: Path) -> dict[tuple[int, int], float]:
    (samples,) = out.rglob("samples_*.jsonl")
    return {(r["doc_id"], 1): r["acc"] for r in map(json.loads, samples.read_text().splitlines())}


def mcnemar_exact(before: dict[Any, Any], after: dict[Any, Any], failed: set[Any]) -> tuple[int, int, float]:
    """(b, c, exact p) over the shared keys; b: failed before only, c: failed after only."""
    shared = before.keys() & after.keys()
    b = sum(1 for k in shared if before[k] in failed and after[k] not in failed)
    c = sum(1 for k in shared if before[k] not in failed and after[k] in failed)
    both = sum(1 for k in shared if before[k] in failed and after[k] in failed)
    table = [[both, b], [c, len(shared) - b - c - both]]
    return b, c, float(mcnemar(table, exact=True).pvalue)
