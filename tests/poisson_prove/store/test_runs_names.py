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


def test_a_name_that_cannot_be_shown_or_typed_is_refused_before_the_store_is_made(tmp_path: Path) -> None:
    """NM05, NM06, NM08: a newline, an ANSI escape, a bidirectional override or more than 100
    characters is exit 2 with a next: line, and not even the store folder is made; letters of
    any script, spaces and punctuation up to 100 characters are names."""
    store = RunStore(tmp_path / "store")
    refused = {
        "x\ny": "non-printing character '\\n'",
        "\x1b[31mred": "non-printing character '\\x1b'",
        "a\u202eb": "non-printing character '\\u202e'",
        "tab\there": "non-printing character '\\t'",
        "n" * 101: "--name is 101 characters long: a run's name is at most 100",
        "n" * 1000: "--name is 1000 characters long",
        " \t ": "--name must not be empty",
    }
    for name, says in refused.items():
        with pytest.raises(ProveError) as raised:
            store.create_run(target_id="agent", name=name, manifest={"target_id": "agent"})
        assert raised.value.exit_code == 2 and says in raised.value.message, (name, raised.value.message)
        assert "\n" not in raised.value.message and raised.value.suggestions, name
        assert not store.root.exists()
    for name in ("エージェント ✓", "n" * 100, "v2 (retry) #3"):
        made = store.create_run(target_id="agent", name=name, manifest={"target_id": "agent"})
        assert made.info.name == name
