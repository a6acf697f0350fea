"""A small Inspect AI eval run for real with a mock model: `inspect_task.py LOG_DIR FORMAT VARIANT [MODEL]`.

The mock model answers each prompt by how many times it was asked it (its epoch), rambling
around the number; VARIANT changes which (sample, epoch) it gets right, as a prompt change
would. Sample q7 raises in the solver when VARIANT is `errors` (stored as an errored sample).
"""

from __future__ import annotations

import sys
from collections import Counter

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, TaskState, generate, solver

SAMPLES, EPOCHS = 10, 3
asked: Counter[str] = Counter()


def right(variant: str, i: int, epoch: int) -> bool:
    if variant == "before":
        return (3 * i + epoch) % 4 != 0 and i != 2
    return (5 * i + epoch) % 3 != 0 or i == 2


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
def fail_on_q7(enabled: bool):
    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        if enabled and state.sample_id == "q7":
            raise RuntimeError("tool sandbox went away")
        return state

    return solve


def main(log_dir: str, log_format: str, variant: str, model_name: str = "mockllm/model") -> None:
    dataset = MemoryDataset(
        [Sample(id=f"q{i}", input=f"what is seven times {i}?", target=str(i * 7)) for i in range(SAMPLES)]
    )
    task = Task(
        dataset=dataset,
        solver=[fail_on_q7(variant == "errors"), generate()],
        scorer=includes(),
        epochs=EPOCHS,
        name="times_seven",
    )
    model = get_model(model_name, custom_outputs=answer("before" if variant == "errors" else variant))
    inspect_eval(
        task,
        model=model,
        log_dir=log_dir,
        log_format=log_format,
        display="none",
        max_samples=1,
        fail_on_error=False,
    )


if __name__ == "__main__":
    main(*sys.argv[1:5])
