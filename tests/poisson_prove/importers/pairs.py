"""Independent readers: the logs by plain json / zipfile (not Inspect's reader), the store by
pyarrow, and McNemar by statsmodels."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import zipfile_zstd  # noqa: F401  (Inspect writes zstd members; this teaches zipfile to read them)
from statsmodels.stats.contingency_tables import mcnemar

Key = tuple[Any, int]


def inspect_samples(log: Path) -> list[dict[str, Any]]:
    if log.suffix == ".json":
        return list(json.loads(log.read_text())["samples"] or [])
    with zipfile.ZipFile(log) as archive:
        return [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]


def cancelled(sample: dict[str, Any]) -> bool:
    message = (sample.get("error") or {}).get("message") or ""
    return message.startswith(("CancelledError(", "Cancelled("))


def inspect_scores(log: Path, scorer: str | None = None) -> dict[Key, Any]:
    """(sample id, epoch) -> the scorer's value (default: the first), for samples with a score."""
    return {
        (s["id"], s["epoch"]): s["scores"][scorer or next(iter(s["scores"]))]["value"]
        for s in inspect_samples(log)
        if s.get("scores") and not s.get("error")
    }


def lm_eval_records(out: Path) -> list[dict[str, Any]]:
    (samples,) = out.rglob("samples_*.jsonl")
    return [json.loads(line) for line in samples.read_text().splitlines()]


def lm_eval_scores(out: Path, metric: str = "acc") -> dict[Key, float]:
    return {(r["doc_id"], 1): r[metric] for r in lm_eval_records(out)}


def mcnemar_exact(before: dict[Any, Any], after: dict[Any, Any], failed: set[Any]) -> tuple[int, int, float]:
    """(b, c, exact p) over the shared keys; b: failed before only, c: failed after only."""
    shared = before.keys() & after.keys()
    b = sum(1 for k in shared if before[k] in failed and after[k] not in failed)
    c = sum(1 for k in shared if before[k] not in failed and after[k] in failed)
    both = sum(1 for k in shared if before[k] in failed and after[k] in failed)
    table = [[both, b], [c, len(shared) - b - c - both]]
    return b, c, float(mcnemar(table, exact=True).pvalue)


def per_case(before: dict[Key, Any], after: dict[Key, Any], failed: set[Any]) -> dict[Any, tuple[int, int]]:
    """sample id -> (b_k, c_k) over its shared epochs."""
    counts: dict[Any, tuple[int, int]] = {}
    for key in before.keys() & after.keys():
        b, c = counts.get(key[0], (0, 0))
        x, y = before[key] in failed, after[key] in failed
        counts[key[0]] = (b + (x and not y), c + (y and not x))
    return counts


def stored_rows(run: Path, columns: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """A stored run's episodes, read with pyarrow alone."""
    return pq.read_table(run / "episodes", columns=list(columns) if columns else None).to_pylist()


def stored_pairs(before: Path, after: Path, failed: set[str], **cfg: Any) -> dict[str, tuple[int, int]]:
    """case_id -> (b_k, c_k) over the twins of two stored runs (rows sharing cell, replicate and
    seed) whose condition has the values `cfg` gives."""

    def wanted(row: dict[str, Any]) -> bool:
        condition = json.loads(row["cfg"])
        return all(condition.get(k) == v for k, v in cfg.items())

    rows = [
        {(r["cell"], r["replicate"], r["seed"]): r for r in stored_rows(run) if wanted(r)}
        for run in (before, after)
    ]
    counts: dict[str, tuple[int, int]] = {}
    for key in rows[0].keys() & rows[1].keys():
        x_row, y_row = rows[0][key], rows[1][key]
        if x_row["outcome"] is None or y_row["outcome"] is None:
            continue
        assert x_row["case_id"] == y_row["case_id"]
        x, y = x_row["outcome"] in failed, y_row["outcome"] in failed
        b, c = counts.get(x_row["case_id"], (0, 0))
        counts[x_row["case_id"]] = (b + (x and not y), c + (y and not x))
    return counts
