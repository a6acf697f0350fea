"""A new run's name must lead back to it: `RunStore.resolve` finds a run by id, name, id prefix or
`latest`, so a name that is taken, `latest`, or another run's id or id prefix is refused before
anything is written (NM07)."""

from __future__ import annotations

from pathlib import Path

import pytest

from poisson_prove.errors import ProveError
from poisson_prove.store.runs import RunStore, check_new_name


def _store_with_run(tmp_path: Path) -> tuple[RunStore, str]:
    store = RunStore(tmp_path / "store")
    writer = store.create_run(target_id="agent", name="a", manifest={"target_id": "agent"})
    return store, writer.info.run_id


@pytest.mark.parametrize(
    ("which", "code", "says"),
    [
        ("id", 2, "is the id of the run"),
        ("prefix", 2, "is the start of the id of the run"),
        ("latest", 2, "reserved"),
        ("taken", 1, "already exists"),
    ],
)
def test_an_unreachable_name_is_refused(tmp_path: Path, which: str, code: int, says: str) -> None:
    store, run_id = _store_with_run(tmp_path)
    name = {"id": run_id, "prefix": run_id[:9], "latest": "latest", "taken": "a"}[which]
    folders = sorted(p.name for p in store.root.iterdir())
    with pytest.raises(ProveError) as raised:
        store.create_run(target_id="agent", name=name, manifest={"target_id": "agent"})
    assert raised.value.exit_code == code
    assert says in raised.value.message and "\n" not in raised.value.message
    assert sorted(p.name for p in store.root.iterdir()) == folders  # nothing written
    with pytest.raises(ProveError):
        check_new_name(name, store.runs(), store.root)


def test_a_name_that_only_looks_like_an_id_elsewhere_is_kept(tmp_path: Path) -> None:
    store, run_id = _store_with_run(tmp_path)
    check_new_name("b", store.runs(), store.root)
    check_new_name(run_id + "x", store.runs(), store.root)  # longer than an id: no run starts with it
    made = store.create_run(target_id="agent", name="b", manifest={"target_id": "agent"})
    assert store.resolve("b").run_id == made.info.run_id
