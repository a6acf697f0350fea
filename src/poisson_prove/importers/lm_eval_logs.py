"""lm-evaluation-harness `--log_samples` output: `samples_<task>_<time>.jsonl`, one doc a line.

Plain JSON Lines, read a line at a time without importing lm-eval; the run's
`results_<time>.json` beside them (when present) names the model and the few-shot count. A
document is paired with the same `doc_id` of another import only when their `doc_hash` agrees:
the hash keys the episode's seed, and an import whose partner run holds other documents under
the same ids is refused, naming them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from poisson_prove.errors import ProveError, ProveExit
from poisson_prove.importers._writer import ImportedSample, LogSummary, ReadLogs
from poisson_prove.importers.logfiles import check_regular, read_lines, read_small_text
from poisson_prove.importers.outcomes import OutcomeMapping
from poisson_prove.store.info import RunInfo

_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$")
METRIC_AXIS = "metric"


def find_logs(paths: Sequence[str]) -> list[Path]:
    """The given files, and the `samples_*.jsonl` files inside given folders (sorted)."""
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found.extend(sorted(path.rglob("samples_*.jsonl")))
        elif path.exists() or path.is_symlink():
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
    for path in found:
        check_regular(path)
    return found


def read_logs(paths: Sequence[Path], mapping: OutcomeMapping, *, metrics: Sequence[str] = ()) -> ReadLogs:
    """Every document of every file, one sample per metric (`metrics` empty: the first the
    record lists), its outcome from the metric's value."""
    samples: list[ImportedSample] = []
    summaries: list[LogSummary] = []
    for path in paths:
        match = _SAMPLES.match(path.name)
        if not match:
            raise ProveError(
                f"{path} is not an lm-eval samples file (its name is not samples_<task>_<time>.jsonl)",
                suggestions=["give the folder lm_eval --output_path wrote, with --log_samples"],
            )
        task = match["task"]
        results = _results(path.with_name(f"results_{match['stamp']}.json"))
        model = _model(results)
        records = 0
        chosen: list[str] = list(metrics)
        for number, line in read_lines(path):
            if not line.strip():
                continue
            records += 1
            record = _record(path, number, line)
            listed = record.get("metrics")
            listed = listed if isinstance(listed, list) else []
            names = [m for m in listed if isinstance(m, str) and m in record]
            for name in list(metrics) or names[:1] or [""]:
                if name not in chosen:
                    chosen.append(name)
                samples.append(_sample(path, number, record, task, model, name, names, mapping))
        summaries.append(
            LogSummary(
                path=path,
                status="success",
                planned=records,
                present=records,
                cancelled=0,
                scorers=max(len(metrics), 1),
                source=_log_source(task, model, results, chosen),
            )
        )
    return ReadLogs(samples, summaries, METRIC_AXIS, ("task", METRIC_AXIS, "filter"))


def _results(path: Path) -> dict[str, Any]:
    text = read_small_text(path)
    try:
        document = json.loads(text) if text is not None else {}
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


def _model(results: dict[str, Any]) -> str | None:
    """`model` and its args from the run's results file, or None when it is not there."""
    config = results.get("config")
    if not isinstance(config, dict) or config.get("model") is None:
        return None
    args = config.get("model_args")
    if isinstance(args, dict):
        args = ",".join(f"{k}={v}" for k, v in sorted(args.items()))
    return f"{config.get('model')}({args})" if args else str(config.get("model"))


def _log_source(task: str, model: str | None, results: dict[str, Any], metrics: list[str]) -> dict[str, Any]:
    def of_task(key: str) -> Any:
        table = results.get(key)
        return table.get(task) if isinstance(table, dict) else None

    source = {
        "task": task,
        "model": model,
        "n_shot": of_task("n-shot"),
        "task_version": of_task("versions"),
        "task_hash": of_task("task_hashes"),
        "metrics": metrics,
    }
    return json.loads(json.dumps(source, default=str))


def _record(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        record: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ProveError(
            f"line {number} of {path} is not JSON ({exc.msg}); "
            "the file is truncated or not an lm-eval samples file",
            suggestions=["run lm_eval again with --log_samples, or give the whole file"],
        ) from exc
    except RecursionError:
        raise ProveError(
            f"line {number} of {path} is JSON nested too deeply to read; it is not an lm-eval samples record"
        ) from None
    if not isinstance(record, dict) or "doc_id" not in record:
        raise ProveError(f"line {number} of {path} has no doc_id; it is not an lm-eval samples record")
    for key, kinds, what in (("doc_id", (int, str), "a number or text"), ("filter", (str,), "text")):
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            raise ProveError(
                f"line {number} of {path}: {key} is {_kind(value)}, not {what}; "
                "it is not an lm-eval samples record"
            )
    return record


def _kind(value: Any) -> str:
    """What a JSON value is, in words ("a list", "true")."""
    if isinstance(value, bool):
        return json.dumps(value)
    names = {dict: "a table", list: "a list", float: "a number with a fraction", int: "a number", str: "text"}
    return names.get(type(value), type(value).__name__)


def _sample(
    path: Path,
    number: int,
    record: dict[str, Any],
    task: str,
    model: str | None,
    name: str,
    names: Sequence[str],
    mapping: OutcomeMapping,
) -> ImportedSample:
    if not name or name not in record:
        raise ProveError(
            f'line {number} of {path} has no metric "{name}" (it has {", ".join(names) or "none"})',
            suggestions=[f"--metric {names[0]}"] if names else [],
            exit_code=ProveExit.USAGE,
        )
    value = record[name]
    outcome = mapping.outcome(value)
    if outcome is None:
        raise ProveError(
            f'line {number} of {path}: metric "{name}" is {value!r}, which the outcome mapping does not read '
            "(an acc-like metric is 0 or 1)",
            suggestions=[f"--metric {n}" for n in names if n != name][:1] or [f"--map {value}=correct"],
            exit_code=ProveExit.USAGE,
        )
    doc_hash = record.get("doc_hash") if isinstance(record.get("doc_hash"), str) else None
    return ImportedSample(
        axes={"task": task, METRIC_AXIS: name, "filter": record.get("filter"), "model": model},
        sample_id=record["doc_id"],
        epoch=1,
        outcome=outcome,
        source=path.name,
        scorer=name,
        value=value,
        document_hash=doc_hash,
        meta={"doc_hash": doc_hash},
    )


def check_same_documents(partner: RunInfo, keyed: Sequence[tuple[str, ImportedSample]]) -> None:
    """Refuse to pair with `partner` when a doc_id both hold is another document there."""
    table = partner.read_episodes(["cell", "meta"])
    theirs: dict[str, str] = {}
    for cell, meta in zip(table.column("cell").to_pylist(), table.column("meta").to_pylist(), strict=True):
        try:
            doc_hash = json.loads(meta or "{}").get("doc_hash")
        except (ValueError, AttributeError):
            continue
        if isinstance(doc_hash, str):
            theirs[cell] = doc_hash
    differ: dict[tuple[str, Any], None] = {}
    for key, sample in keyed:
        other = theirs.get(key)
        if other is not None and sample.document_hash is not None and other != sample.document_hash:
            differ[(str(sample.axes.get("task")), sample.sample_id)] = None
    if not differ:
        return
    tasks = sorted({task for task, _ in differ})
    listed = [str(doc) for _, doc in differ][:5]
    more = f" and {len(differ) - len(listed):,} more" if len(differ) > len(listed) else ""
    raise ProveError(
        f"doc_id {', '.join(listed)}{more} of task {', '.join(tasks)} are other documents than in run "
        f'"{partner.name}" (their doc_hash differs); pairing them would compare different documents',
        suggestions=[
            "--unpaired: store this run with a salt of its own, compared with others unpaired (Fisher)"
        ],
    )
