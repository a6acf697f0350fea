"""Inspect AI logs (`.eval` and `.json`) through `inspect_ai.log`, the tool's own reader."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from poisson_prove.errors import ProveError
from poisson_prove.importers._writer import ImportedSample, OutcomeMapping

T_CHOICES = ("none", "messages", "tokens")


def find_logs(paths: Sequence[str]) -> list[Path]:
    """The given files, and the `.eval` / `.json` logs inside given folders (sorted)."""
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in {".eval", ".json"} and p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise ProveError(
                f"{path} does not exist", suggestions=["poisson-prove import inspect LOG.eval ..."]
            )
    if not found:
        raise ProveError(
            f"no Inspect AI log (.eval or .json) in {', '.join(paths)}",
            suggestions=["inspect eval TASK --log-dir logs, then: poisson-prove import inspect logs"],
        )
    return found


def read_samples(
    paths: Sequence[Path], mapping: OutcomeMapping, *, scorer: str | None = None, t: str = "none"
) -> list[ImportedSample]:
    """Every sample of every epoch of the logs, its outcome from the scorer's value."""
    try:
        from inspect_ai.log import read_eval_log  # inspect-ai extra: optional, only for `import inspect`
    except ImportError as exc:
        raise ProveError(
            "reading Inspect AI logs needs the inspect-ai package",
            suggestions=["pip install 'poisson-prove[inspect]'"],
        ) from exc
    samples: list[ImportedSample] = []
    for path in paths:
        try:
            log = read_eval_log(str(path))
        except Exception as exc:  # the reader raises many types for a file that is not a log
            raise ProveError(
                f"{path} is not a readable Inspect AI log ({type(exc).__name__}: {str(exc)[:200]})",
                suggestions=["give the .eval or .json files inspect eval wrote (its --log-dir)"],
            ) from exc
        if log.samples is None:
            raise ProveError(
                f"{path} is an Inspect AI log without samples (written with --no-log-samples?)",
                suggestions=["run inspect eval again without --no-log-samples"],
            )
        axes: dict[str, Any] = {"task": log.eval.task, "model": log.eval.model}
        axes.update({f"arg.{k}": v for k, v in sorted((log.eval.task_args or {}).items())})
        for sample in log.samples:
            samples.append(_sample(path, axes, sample, mapping, scorer, t))
    return samples


def _sample(
    path: Path, axes: dict[str, Any], sample: Any, mapping: OutcomeMapping, scorer: str | None, t: str
) -> ImportedSample:
    outcome: str | None = None
    kind = message = None
    if sample.error is not None:
        kind, message = "sample_error", sample.error.message
    elif not sample.scores:
        kind, message = "unscored", "the sample has no score"
    else:
        name = scorer or next(iter(sample.scores))
        if name not in sample.scores:
            raise ProveError(
                f'{path}: sample {sample.id!r} has no scorer "{name}" (it has {", ".join(sample.scores)})',
                suggestions=[f"--scorer {next(iter(sample.scores))}"],
                exit_code=2,
            )
        value = sample.scores[name].value
        outcome = mapping.outcome(value)
        if outcome is None:
            raise ProveError(
                f'{path}: sample {sample.id!r} scored {value!r} by "{name}", '
                "which the outcome mapping does not read",
                suggestions=[f"--map {value}=correct (or another outcome)"],
                exit_code=2,
            )
    return ImportedSample(
        axes=axes,
        sample_id=sample.id,
        epoch=int(sample.epoch),
        outcome=outcome,
        source=path.name,
        t=_t(sample, t),
        error_kind=kind,
        error_message=message,
        started_at=_started(sample),
        duration_s=getattr(sample, "total_time", None),
    )


def _t(sample: Any, t: str) -> float | None:
    if t == "messages":
        return float(len(sample.messages))
    if t == "tokens":
        return float(sum(u.total_tokens for u in (sample.model_usage or {}).values()))
    return None


def _started(sample: Any) -> dt.datetime | None:
    started = getattr(sample, "started_at", None)
    if isinstance(started, str):
        try:
            return dt.datetime.fromisoformat(started)
        except ValueError:
            return None
    return started if isinstance(started, dt.datetime) else None
