"""lm-evaluation-harness `--log_samples` output: `samples_<task>_<time>.jsonl`, one doc a line.

Plain JSON Lines, so no lm-eval import is needed to read them; the run's `results_<time>.json`
beside them (when present) names the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from poisson_prove.errors import ProveError
from poisson_prove.importers._writer import ImportedSample, OutcomeMapping

_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$")


def find_logs(paths: Sequence[str]) -> list[Path]:
    """The given files, and the `samples_*.jsonl` files inside given folders (sorted)."""
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("samples_*.jsonl") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise ProveError(
                f"{path} does not exist", suggestions=["poisson-prove import lm-eval OUTPUT_PATH"]
            )
    if not found:
        raise ProveError(
            f"no lm-eval samples file (samples_<task>_<time>.jsonl) in {', '.join(paths)}",
            suggestions=[
                "lm_eval ... --output_path out --log_samples, then: poisson-prove import lm-eval out"
            ],
        )
    return found


def read_samples(
    paths: Sequence[Path], mapping: OutcomeMapping, *, metric: str | None = None
) -> list[ImportedSample]:
    samples: list[ImportedSample] = []
    for path in paths:
        match = _SAMPLES.match(path.name)
        if not match:
            raise ProveError(
                f"{path} is not an lm-eval samples file (its name is not samples_<task>_<time>.jsonl)",
                suggestions=["give the folder lm_eval --output_path wrote, with --log_samples"],
            )
        task, model = match["task"], _model(path.with_name(f"results_{match['stamp']}.json"))
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ProveError(f"{path} cannot be read: {exc}") from exc
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            samples.append(_sample(path, number, line, task, model, mapping, metric))
    return samples


def _model(results: Path) -> str | None:
    """`model` and its args from the run's results file, or None when it is not there."""
    try:
        config = json.loads(results.read_text(encoding="utf-8")).get("config") or {}
    except (OSError, ValueError, AttributeError):
        return None
    args = config.get("model_args")
    if isinstance(args, dict):
        args = ",".join(f"{k}={v}" for k, v in sorted(args.items()))
    return f"{config.get('model')}({args})" if args else str(config.get("model"))


def _sample(
    path: Path,
    number: int,
    line: str,
    task: str,
    model: str | None,
    mapping: OutcomeMapping,
    metric: str | None,
) -> ImportedSample:
    try:
        record: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ProveError(
            f"line {number} of {path} is not JSON ({exc.msg}); "
            "the file is truncated or not an lm-eval samples file",
            suggestions=["run lm_eval again with --log_samples, or give the whole file"],
        ) from exc
    if not isinstance(record, dict) or "doc_id" not in record:
        raise ProveError(f"line {number} of {path} has no doc_id; it is not an lm-eval samples record")
    names = [m for m in record.get("metrics") or [] if m in record]
    name = metric or (names[0] if names else None)
    if name is None or name not in record:
        raise ProveError(
            f'line {number} of {path} has no metric "{name}" (it has {", ".join(names) or "none"})',
            suggestions=[f"--metric {names[0]}"] if names else [],
            exit_code=2,
        )
    value = record[name]
    outcome = mapping.outcome(value)
    if outcome is None:
        raise ProveError(
            f'line {number} of {path}: metric "{name}" is {value!r}, which the outcome mapping does not read '
            "(an acc-like metric is 0 or 1)",
            suggestions=[f"--metric {n}" for n in names if n != name][:1] or [f"--map {value}=correct"],
            exit_code=2,
        )
    axes: dict[str, Any] = {"task": task, "model": model, "filter": record.get("filter")}
    return ImportedSample(
        axes=axes,
        sample_id=record["doc_id"],
        epoch=1,
        outcome=outcome,
        source=path.name,
        meta={"doc_hash": record.get("doc_hash"), "metric": name},
    )
