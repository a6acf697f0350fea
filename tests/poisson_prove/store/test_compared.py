"""~/.cache/poisson-prove/compared.jsonl through `diff`: a run that gained episodes after it
was compared gets one note saying when, and how many episodes then and now."""

from __future__ import annotations

from pathlib import Path

from poisson_prove.design.conditions import condition_key
from poisson_prove.design.seeding import episode_seed
from poisson_prove.store.runs import RunStore
from tests.poisson_prove.runs import PAIR_N as N
from tests.poisson_prove.runs import Episodes, store_with_pair


def test_resumed_run_gets_a_note(prove, workdir: Path) -> None:
    store, _a, b = store_with_pair(workdir)
    first = prove("diff")
    assert "note:" not in first.stdout
    # resume: the after run gains episodes (new replicates) after it was compared
    info = RunStore(store).resolve(b.run_id)
    extra = Episodes()
    for r in range(N, N + 10):
        extra.add({"ticket": "refund", "temperature": 0.0}, r, "resolved", case_id="refund")
    key = condition_key(extra.cfg[0])
    RunStore(store).open_run(info).write_batch({
        "run_id": [b.run_id] * 10, "cell": [key] * 10, "cfg": [key] * 10, "replicate": extra.replicate,
        "seed": [episode_seed(info.manifest["salt"], key, r) for r in extra.replicate],
        "outcome": extra.outcome, "t": extra.t, "horizon": extra.horizon, "case_id": extra.case_id,
        "meta": [None] * 10, "error_kind": [None] * 10, "error_message": [None] * 10,
        "started_at": [None] * 10, "duration_s": [None] * 10, "spans": [None] * 10,
        "agent_calls": [None] * 10,
    })
    second = prove("diff")
    assert second.returncode == 0
    notes = [line for line in second.stdout.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1
    assert notes[0].startswith(f'note: run "{b.name}" was resumed after it was compared at ')
    assert notes[0].endswith("(240 episodes then, 250 now)")
