"""Logs written by the real tools, once per test session: Inspect AI with `mockllm/model`, and
lm-evaluation-harness with its `dummy` model on a task read from local JSON (offline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POISSON_PROVE_", "INSPECT_"))}
    env.update(
        HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", INSPECT_LOG_LEVEL="error"
    )
    return env


def run_inspect(log_dir: Path, log_format: str, variant: str, model: str = "mockllm/model") -> Path:
    pytest.importorskip("inspect_ai")
    subprocess.run(
        [sys.executable, str(HERE / "inspect_task.py"), str(log_dir), log_format, variant, model],
        check=True,
        capture_output=True,
        text=True,
        env=_offline_env(),
        timeout=120,
    )
    (log,) = [p for p in log_dir.iterdir() if p.suffix in {".eval", ".json"}]
    return log


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """before (.json), after (.eval, the change), errors (.eval, q7 raising), other_model (the
    after answers from a model of another name) logs."""
    root = tmp_path_factory.mktemp("inspect")
    return {
        "before": run_inspect(root / "before", "json", "before"),
        "after": run_inspect(root / "after", "eval", "after"),
        "errors": run_inspect(root / "errors", "eval", "errors"),
        "other_model": run_inspect(root / "other_model", "eval", "after", "mockllm/other"),
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


@pytest.fixture(scope="session")
def lm_eval_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real lm_eval runs of one local multiple-choice task with the dummy model, two seeds
    (the dummy model's log-likelihoods are random: a change in what it prefers)."""
    root = tmp_path_factory.mktemp("lm_eval")
    tasks = root / "tasks"
    tasks.mkdir()
    data = tasks / "data.jsonl"
    with open(data, "w", encoding="utf-8") as handle:
        for i in range(40):
            handle.write(
                json.dumps(
                    {"question": f"Which is {i}?", "choices": [str(i), "x", "y", "z"], "answer": i % 4}
                )
                + "\n"
            )
    (tasks / "tiny.yaml").write_text(TASK_YAML.format(data=data), encoding="utf-8")
    return {"before": run_lm_eval(tasks, root / "before", 1), "after": run_lm_eval(tasks, root / "after", 2)}
