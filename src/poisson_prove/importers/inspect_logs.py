"""Inspect AI logs (`.eval` and `.json`) through `inspect_ai.log`, the tool's own reader and lister.

A folder is listed by `inspect_ai.log.list_eval_logs` (so an `inspect eval-set` folder, with its
eval-set.json and logs.json, imports); a `.eval` archive is checked to inflate within bounds
before Inspect reads it (importers.logfiles). A log whose eval did not finish (status `error`,
`cancelled`, or `started`: still running or killed) is read for what it holds and makes the run
partial; a sample the eval's stop cancelled (Inspect's own test: its error is the repr of a
`CancelledError`) is left out and counted, not stored as the agent's error.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.importers._writer import ImportedSample, LogSummary, ReadLogs
from poisson_prove.importers.logfiles import check_eval_archive, check_regular
from poisson_prove.importers.outcomes import OutcomeMapping

T_CHOICES = ("none", "messages", "tokens")
SCORER_AXIS = "scorer"


def _inspect_log() -> Any:
    try:
        import inspect_ai.log as inspect_log  # inspect-ai extra: optional, only for `import inspect`
    except ImportError as exc:
        raise ProveError(
            "reading Inspect AI logs needs the inspect-ai package",
            suggestions=["pip install 'poisson-prove[inspect]'"],
        ) from exc
    return inspect_log


def find_logs(paths: Sequence[str]) -> list[Path]:
    """The given files, and the logs Inspect lists in given folders (sorted); each a regular file."""
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            listed = _inspect_log().list_eval_logs(str(path), recursive=True)
            found.extend(sorted(_local_path(info.name) for info in listed))
        else:
            if not path.exists() and not path.is_symlink():
                raise ProveError(
                    f"{path} does not exist", suggestions=["poisson-prove import inspect LOG.eval ..."]
                )
            found.append(path)
    if not found:
        raise ProveError(
            f"no Inspect AI log (.eval or .json) in {', '.join(paths)}",
            suggestions=["inspect eval TASK --log-dir logs, then: poisson-prove import inspect logs"],
        )
    for path in found:
        check_regular(path)
    return found


def _local_path(name: str) -> Path:
    parsed = urlparse(name)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else Path(name)


def read_logs(
    paths: Sequence[Path], mapping: OutcomeMapping, *, scorers: Sequence[str] = (), t: str = "none"
) -> ReadLogs:
    """Every sample of every epoch of the logs, one per scorer, its outcome from that scorer's
    value (`scorers` empty: each log's first scorer)."""
    for path in paths:  # every archive checked before Inspect's import, ~2 s
        if path.suffix == ".eval":
            check_eval_archive(path)
    inspect_log = _inspect_log()
    samples: list[ImportedSample] = []
    summaries: list[LogSummary] = []
    for path in paths:
        try:
            log = inspect_log.read_eval_log(str(path))
        except Exception as exc:  # the reader raises many types for a file that is not a log
            raise ProveError(
                f"{path} is not a readable Inspect AI log ({type(exc).__name__}: {_one_line(exc)})",
                suggestions=["give the .eval or .json files inspect eval wrote (its --log-dir)"],
            ) from exc
        finished = log.status == "success"
        if log.samples is None and finished:
            raise ProveError(
                f"{path} is an Inspect AI log without samples (written with --no-log-samples?)",
                suggestions=["run inspect eval again without --no-log-samples"],
            )
        present = list(log.samples or [])
        names = list(scorers) or _first_scorer(present)
        axes: dict[str, Any] = {"task": log.eval.task, "model": log.eval.model}
        axes.update({f"arg.{k}": v for k, v in sorted((log.eval.task_args or {}).items())})
        cancelled = 0
        for sample in present:
            if sample.error is not None and _cancelled(sample.error.message):
                cancelled += 1
                continue
            for name in names:
                samples.append(_sample(path, {**axes, SCORER_AXIS: name}, sample, name, mapping, t))
        summaries.append(
            LogSummary(
                path=path,
                status=str(log.status),
                planned=len(present) if finished else _planned(log, len(present)),
                present=len(present),
                cancelled=cancelled,
                scorers=len(names),
                message=_one_line(log.error.message) if log.error is not None else None,
                source=_log_source(log, names),
            )
        )
    return ReadLogs(samples, summaries, SCORER_AXIS, ("task", SCORER_AXIS))


def _cancelled(message: str | None) -> bool:
    """Inspect's own test of a sample the eval's stop cancelled (not one that failed)."""
    try:
        from inspect_ai._util.error import is_cancellation_message  # inspect-ai extra, as above
    except ImportError:  # an Inspect without it: the same rule, its error is a cancellation's repr
        return message is not None and message.startswith(("CancelledError(", "Cancelled("))
    return bool(is_cancellation_message(message))


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())[:200]


def _first_scorer(samples: Sequence[Any]) -> list[str]:
    for sample in samples:
        if sample.scores:
            return [next(iter(sample.scores))]
    return ["none"]  # no sample was scored: every one is an error


def _planned(log: Any, present: int) -> int:
    """The samples x epochs an unfinished eval planned: Inspect's own count when it wrote one,
    else its dataset (as limited) times its epochs."""
    if log.results is not None and log.results.total_samples:
        return max(int(log.results.total_samples), present)
    config = log.eval.config
    count = int(log.eval.dataset.samples or 0)
    if config.sample_id is not None:
        count = len(config.sample_id) if isinstance(config.sample_id, list) else 1
    elif isinstance(config.limit, int):
        count = min(count, config.limit)
    elif isinstance(config.limit, tuple | list) and len(config.limit) == 2:
        count = min(count, int(config.limit[1]) - int(config.limit[0]))
    return max(count * int(config.epochs or 1), present)


def _log_source(log: Any, scorers: Sequence[str]) -> dict[str, Any]:
    metrics: dict[str, list[str]] = {}
    for score in (log.results.scores if log.results is not None else None) or []:
        if score.name in scorers:
            metrics[score.name] = sorted(score.metrics or {})
    source = {
        "task": log.eval.task,
        "model": log.eval.model,
        "task_args": dict(log.eval.task_args or {}),
        "scorers": list(scorers),
        "metrics": metrics,
        "epochs": log.eval.config.epochs,
    }
    return json.loads(json.dumps(source, default=str))


def _sample(
    path: Path, axes: dict[str, Any], sample: Any, name: str, mapping: OutcomeMapping, t: str
) -> ImportedSample:
    outcome: str | None = None
    value: Any = None
    kind = message = None
    if sample.error is not None:
        kind, message = "sample_error", sample.error.message
    elif not sample.scores:
        kind, message = "unscored", "the sample has no score"
    else:
        if name not in sample.scores:
            raise ProveError(
                f'{path}: sample {sample.id!r} has no scorer "{name}" (it has {", ".join(sample.scores)})',
                suggestions=[f"--scorer {next(iter(sample.scores))}"],
                exit_code=ProveExit.USAGE,
            )
        value = sample.scores[name].value
        outcome = mapping.outcome(value)
        if outcome is None:
            raise ProveError(
                f'{path}: sample {sample.id!r} scored {_one_line(repr(value))} by "{name}", '
                "which the outcome mapping does not read",
                suggestions=[f"--map {value}=correct (or another outcome)"],
                exit_code=ProveExit.USAGE,
            )
    return ImportedSample(
        axes=axes,
        sample_id=sample.id,
        epoch=int(sample.epoch),
        outcome=outcome,
        source=path.name,
        scorer=name,
        value=value,
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
