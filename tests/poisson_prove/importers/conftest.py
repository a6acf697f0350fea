"""Logs written by the real tools, once per test session: Inspect AI with `mockllm/model`, and
lm-evaluation-harness with its `dummy` model on a task read from local JSON (offline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import once_per_session

HERE = Path(__file__).parent


def made_once(
    factory: pytest.TempPathFactory, name: str, make: Callable[[Path], dict[str, Path]]
) -> dict[str, Path]:
    """`make(root)` run once for the whole session, however many pytest-xdist workers ask (the
    real tools take tens of seconds; each worker making its own copy cost the suite that much
    per worker): the paths of the logs made, as every worker reads them back."""
    made = once_per_session(factory, name, lambda root: {k: str(v) for k, v in make(root).items()})
    return {label: Path(path) for label, path in made.items()}


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POISSON_PROVE_", "INSPECT_"))}
    env.update(
        HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", INSPECT_LOG_LEVEL="error"
    )
    return env


def run_inspect(
    log_dir: Path, log_format: str, variant: str, *flags: str, model: str = "mockllm/model"
) -> Path:
    """One real `inspect eval` (or eval_set, with --set) of inspect_task.py; the log it wrote."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import list_eval_logs  # inspect-ai: only where Inspect logs are made

    subprocess.run(
        [sys.executable, str(HERE / "inspect_task.py"), str(log_dir), log_format, variant, model, *flags],
        check=variant != "killed",
        capture_output=True,
        text=True,
        env=_offline_env(),
        timeout=180,
    )
    (log,) = list_eval_logs(str(log_dir))
    return Path(log.name.removeprefix("file://"))


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Logs Inspect AI wrote for inspect_task.py, scored by includes() (C/I) and closeness
    (1.0 / 0.5): before (.json, by eval_set: its folder holds eval-set.json and logs.json too),
    after (.eval, the change), errors (q7 raising), other_model (the after answers from a model
    of another name), and three evals that did not finish: failed (status error), cancelled
    (Ctrl-C while two samples run) and killed (SIGKILL: status started, no sample); and
    alike_before / alike_after, a model answering every epoch of a sample alike, the change
    fixing 3 of its 10 samples."""
    return made_once(tmp_path_factory, "inspect", _make_inspect_logs)


def _make_inspect_logs(root: Path) -> dict[str, Path]:
    both = "--two-scorers"
    return {
        "before": run_inspect(root / "before", "json", "before", both, "--set"),
        "after": run_inspect(root / "after", "eval", "after", both),
        "errors": run_inspect(root / "errors", "eval", "errors", both),
        "other_model": run_inspect(root / "other_model", "eval", "after", both, model="mockllm/other"),
        "failed": run_inspect(root / "failed", "eval", "failed", both),
        "cancelled": run_inspect(root / "cancelled", "eval", "cancelled", both),
        "killed": run_inspect(root / "killed", "eval", "killed", both),
        "alike_before": run_inspect(root / "alike_before", "eval", "alike_before"),
        "alike_after": run_inspect(root / "alike_after", "eval", "alike_after"),
    }


TASK_YAML = """task: tiny_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{answer}}}}"
metric_list:
  - metric: acc
  - metric: acc_norm
"""


def run_lm_eval(tasks: Path, out: Path, seed: int) -> Path:
    lm_eval = Path(sys.executable).parent / "lm_eval"
    if not lm_eval.exists():
        pytest.skip("lm-eval is not installed")
    subprocess.run(
        [
            str(lm_eval),
            "--model",
            "dummy",
            "--tasks",
            "tiny_mc",
            "--include_path",
            str(tasks),
            "--output_path",
            str(out),
            "--log_samples",
            "--seed",
            f"{seed},{seed},{seed},{seed}",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=_offline_env(),
        timeout=300,
        cwd=out.parent,
    )
    return out


def _documents(tasks: Path, name: str, order: list[int]) -> Path:
    data = tasks / name
    with open(data, "w", encoding="utf-8") as handle:
        for i in order:
            record = {"question": f"Which is {i}?", "choices": [str(i), "x", "y", "z"], "answer": i % 4}
            handle.write(json.dumps(record) + "\n")
    return data


@pytest.fixture(scope="session")
def lm_eval_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real lm_eval runs of one local multiple-choice task with the dummy model: before and
    after with two seeds (the dummy model's log-likelihoods are random: a change in what it
    prefers), and shuffled: the task's data file in another order, so every doc_id is another
    document (the same task name, other doc_hash)."""
    return made_once(tmp_path_factory, "lm_eval", _make_lm_eval_outputs)


def _make_lm_eval_outputs(root: Path) -> dict[str, Path]:
    outputs = {}
    for label, seed, order in (
        ("before", 1, list(range(40))),
        ("after", 2, list(range(40))),
        ("shuffled", 2, [(7 * i) % 40 for i in range(40)]),
    ):
        tasks = root / f"tasks-{label}"
        tasks.mkdir()
        data = _documents(tasks, "data.jsonl", order)
        (tasks / "tiny.yaml").write_text(TASK_YAML.format(data=data), encoding="utf-8")
        outputs[label] = run_lm_eval(tasks, root / label, seed)
    return outputs
