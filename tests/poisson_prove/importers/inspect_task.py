"""A small Inspect AI eval run for real with a mock model:
`inspect_task.py LOG_DIR FORMAT VARIANT [MODEL] [--set] [--two-scorers]`.

The mock model answers each prompt by how many times it was asked it (its epoch), rambling
around the number; VARIANT changes which (sample, epoch) it gets right, as a prompt change
would. Variants beyond `before` / `after` (they answer as `before`):

- `errors`: sample q7 raises in the solver (stored as an errored sample; the eval succeeds);
- `failed`: q7 raises without --no-fail-on-error: the eval stops, status `error`;
- `cancelled`: two samples at a time; when q5 starts, the eval gets Ctrl-C (SIGINT) as from a
  user: status `cancelled`, the sample still running cancelled (a `CancelledError`);
- `killed`: when q5 starts, the process is SIGKILLed: the log stays `started`.

`alike_before` / `alike_after` answer every epoch of a sample alike (as a temperature-0 or cached
model does): before gets q0-q3 wrong, after fixes q0, q1 and q2 (3 samples x every epoch).

`--set` runs it through `inspect_ai.eval_set` (the folder then holds eval-set.json and
logs.json beside the log); `--two-scorers` scores with `includes()` (C/I) and `closeness`
(1.0 for the answer, 0.5 for an answer one off).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections import Counter

from inspect_ai import Task, eval_set
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Scorer, Target, includes, mean, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver

SAMPLES, EPOCHS = 10, 3
asked: Counter[str] = Counter()


def right(variant: str, i: int, epoch: int) -> bool:
    if variant == "alike_before":
        return i > 3
    if variant == "alike_after":
        return i != 3
    if variant == "after":
        return (5 * i + epoch) % 3 != 0 or i == 2
    return (3 * i + epoch) % 4 != 0 and i != 2


def answer(variant: str):
    def respond(messages, tools, tool_choice, config) -> ModelOutput:
        prompt = str(messages[-1].content)
        asked[prompt] += 1
        i = int(prompt.split()[-1].rstrip("?"))
        said = i * 7 if right(variant, i, asked[prompt]) else i * 7 + 1
        text = f"Let me think about it for a while... well, I would say {said}, more or less."
        output = ModelOutput.from_content("mockllm/model", text)
        output.usage = ModelUsage(
            input_tokens=12, output_tokens=len(text) // 4, total_tokens=12 + len(text) // 4
        )
        return output

    return respond


@solver
def trouble(variant: str):
    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        if variant in {"errors", "failed"} and state.sample_id == "q7":
            raise RuntimeError("tool sandbox went away")
        if variant == "cancelled":
            if state.sample_id == "q5":
                os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0.3)  # the other sample is still running when Ctrl-C lands
        if variant == "killed" and state.sample_id == "q5":
            os.kill(os.getpid(), signal.SIGKILL)
        return state

    return solve


@scorer(metrics=[mean()])
def closeness() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        words = [w.strip(".,") for w in state.output.completion.split()]
        said = [int(w) for w in words if w.isdigit()]
        value = (
            1.0
            if int(target.text) in said
            else 0.5
            if any(abs(s - int(target.text)) <= 1 for s in said)
            else 0.0
        )
        return Score(value=value)

    return score


def main(argv: list[str]) -> None:
    flags = {a for a in argv if a.startswith("--")}
    log_dir, log_format, variant, *rest = [a for a in argv if not a.startswith("--")]
    model_name = rest[0] if rest else "mockllm/model"
    dataset = MemoryDataset(
        [Sample(id=f"q{i}", input=f"what is seven times {i}?", target=str(i * 7)) for i in range(SAMPLES)]
    )
    task = Task(
        dataset=dataset,
        solver=[trouble(variant), generate()],
        scorer=[includes(), closeness()] if "--two-scorers" in flags else includes(),
        epochs=EPOCHS,
        name="times_seven",
    )
    answers = variant if variant in {"after", "alike_before", "alike_after"} else "before"
    model = get_model(model_name, custom_outputs=answer(answers))
    common = dict(
        model=model,
        log_dir=log_dir,
        log_format=log_format,
        display="none",
        max_samples=2 if variant == "cancelled" else 1,
        fail_on_error=variant == "failed",
    )
    if "--set" in flags:
        eval_set(task, retry_attempts=0, **common)
    else:
        inspect_eval(task, **common)


if __name__ == "__main__":
    main(sys.argv[1:])
