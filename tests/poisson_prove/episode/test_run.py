"""One core turns a rollout's call into a row: `run_into` (the sweep's in-process path, row
tuples) and `run_episode` (every backend's worker, a row dict) give the same row for every way
an episode can end, and an os._exit carries the whole row."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest

from poisson_prove import Episode, record
from poisson_prove.episode.row import EPISODE_COLUMNS, ROW_FIELDS
from poisson_prove.episode.run import Job, ProcessExit, Task, os_exit_guard, run_episode, run_into

JOB = Job(run_id="run-1", target="agent:rollout", spec_dir=".", outcomes=("ok", "bad"))
TASK = Task('{"x":"a"}', {"x": "a"}, 3, 12345)
# Everything but the run (not in a row tuple) and what holds a clock, which differs between calls.
COMPARED = [name for name in ROW_FIELDS if name not in ("started_at", "duration_s", "spans")]


class Boom(Exception):
    pass


def _ends(kind: str) -> Any:
    def rollout(cfg: dict[str, Any], seed: int) -> Any:
        record("called", seed=seed)
        if kind == "valid":
            return Episode("bad", 2, 5, {"case_id": 7, "note": "naïve"})
        if kind == "numpy":
            return Episode("ok", np.int64(2), np.float64(5.0), {})
        if kind == "raises":
            raise Boom("x" * 3000)
        if kind == "sys_exit":
            raise SystemExit(4)
        if kind == "not_an_episode":
            return {"outcome": "ok"}
        if kind == "undeclared":
            return Episode("maybe", 1, 5, {})
        if kind == "t_past_horizon":
            return Episode("ok", 6, 5, {})
        if kind == "nan_in_meta":
            return Episode("ok", 1, 5, {"score": math.nan})
        raise AssertionError(kind)

    return rollout


def _fused(rollout: Any, job: Job = JOB) -> dict[str, Any]:
    out: list[tuple[Any, ...]] = []
    assert run_into(rollout, job, iter([(TASK.condition, TASK.cfg, TASK.replicate, TASK.seed)]), out) == 1
    (row,) = out
    assert len(row) == len(ROW_FIELDS)
    return dict(zip(ROW_FIELDS, row, strict=True))


@pytest.mark.parametrize(
    ("kind", "error_kind", "message"),
    [
        ("valid", None, None),
        ("numpy", None, None),
        ("raises", "Boom", "x" * 1999 + "…"),
        ("sys_exit", "system_exit", "the rollout called sys.exit(4)"),
        ("not_an_episode", "invalid_episode", "rollout returned dict, not poisson_prove.Episode"),
        ("undeclared", "invalid_episode", "outcome 'maybe' is not declared (declared: bad, ok)"),
        ("t_past_horizon", "invalid_episode", "t 6 is outside [0, horizon 5]"),
        ("nan_in_meta", "invalid_episode", None),
    ],
)
def test_both_roads_give_the_same_row(kind: str, error_kind: str | None, message: str | None) -> None:
    as_dict = run_episode(_ends(kind), JOB, TASK)
    assert list(as_dict) == list(EPISODE_COLUMNS)
    as_tuple = _fused(_ends(kind))
    assert [as_dict[name] for name in COMPARED] == [as_tuple[name] for name in COMPARED]
    assert (as_dict["run_id"], as_dict["cell"], as_dict["cfg"]) == ("run-1", TASK.condition, TASK.condition)
    assert (as_dict["replicate"], as_dict["seed"]) == (3, 12345)
    assert as_dict["error_kind"] == error_kind
    if message is not None:
        assert as_dict["error_message"] == message
    for row in (as_dict, as_tuple):
        assert [s["name"] for s in json.loads(row["spans"])] == ["called"]
    assert isinstance(as_dict["started_at"], float) and as_dict["duration_s"] >= 0
    if error_kind is None:
        assert as_dict["outcome"] in ("ok", "bad") and 0 <= as_dict["t"] <= as_dict["horizon"]
        assert json.loads(as_dict["meta"]) == ({"case_id": 7, "note": "naïve"} if kind == "valid" else {})
        assert as_dict["case_id"] == ("7" if kind == "valid" else None)
    else:
        assert [as_dict[n] for n in ("outcome", "t", "horizon", "case_id", "meta")] == [None] * 5


def test_numpy_numbers_are_stored_as_plain_floats() -> None:
    row = run_episode(_ends("numpy"), JOB, TASK)
    assert (type(row["t"]), type(row["horizon"])) == (float, float)
    assert (row["t"], row["horizon"]) == (2.0, 5.0)


def test_a_failed_meta_encoding_leaves_the_next_episode_unharmed() -> None:
    circular: dict[str, Any] = {}
    circular["self"] = circular
    bad = run_episode(lambda cfg, seed: Episode("ok", 1, 5, circular), JOB, TASK)
    assert bad["error_kind"] == "invalid_episode" and "meta cannot be stored as JSON" in bad["error_message"]
    good = run_episode(lambda cfg, seed: Episode("ok", 1, 5, {"a": [1, 2]}), JOB, TASK)
    assert good["error_kind"] is None and good["meta"] == '{"a":[1,2]}'


def test_the_jobs_scope_is_entered_around_each_call_on_both_roads() -> None:
    seen: list[tuple[Mapping[str, Any], int]] = []

    @contextlib.contextmanager
    def scope(cfg: Mapping[str, Any], seed: int) -> Iterator[None]:
        seen.append((cfg, seed))
        record("fault", where="scope")
        yield

    job = Job(run_id="run-1", target="agent:rollout", spec_dir=".", outcomes=("ok", "bad"), scope=scope)
    rows = [run_episode(_ends("valid"), job, TASK), _fused(_ends("valid"), job)]
    assert seen == [(TASK.cfg, TASK.seed)] * 2
    for row in rows:
        assert [s["name"] for s in json.loads(row["spans"])] == ["fault", "called"]


def test_os_exit_is_raised_with_the_episodes_whole_row() -> None:
    import os

    def exits(cfg: dict[str, Any], seed: int) -> Any:
        os._exit(9)

    with os_exit_guard(), pytest.raises(ProcessExit) as caught:
        run_episode(exits, JOB, TASK)
    row = caught.value.row
    assert row is not None and list(row) == list(EPISODE_COLUMNS)
    assert (row["cell"], row["replicate"], row["error_kind"]) == (TASK.condition, 3, "process_exit")
    assert row["error_message"].startswith("the rollout called os._exit(9)")

    out: list[tuple[Any, ...]] = []
    items = iter([(TASK.condition, TASK.cfg, r, r) for r in range(3)])
    with os_exit_guard(), pytest.raises(ProcessExit) as fused:
        run_into(exits, JOB, items, out)
    assert len(out) == 1 and fused.value.row == dict(zip(EPISODE_COLUMNS, ("run-1", *out[0]), strict=True))
    assert next(items)[2] == 1  # the episodes after it are left for the caller


def test_run_into_stops_when_full_and_resumes_where_it_stopped() -> None:
    items = iter([(TASK.condition, TASK.cfg, r, r) for r in range(5)])
    out: list[tuple[Any, ...]] = []
    assert run_into(_ends("valid"), JOB, items, out, full=2) == 2
    assert run_into(_ends("valid"), JOB, items, out) == 3
    assert [row[ROW_FIELDS.index("replicate")] for row in out] == [0, 1, 2, 3, 4]


def test_plain_text_metas_are_stored_as_the_encoder_writes_them_every_time() -> None:
    # Metas of plain text only are looked up by their items once seen: the second sweep of the
    # same metas must store the same bytes, and a lone surrogate stays an invalid episode.
    metas = [
        {"case_id": "a"},
        {"case_id": "naïve \"quoted\" \\ back\nslash\x00", "label": "😀\u2028"},
        {},
        {"k": "v", "n": 1},  # not text only: the encoder's path
        {"case_id": "\ud800"},
        {"b": "1", "a": "2"},  # order kept as given
    ]

    def rollout(cfg: dict[str, Any], seed: int) -> Episode:
        return Episode("ok", 1, 5, metas[seed])

    items = [('{"x":"a"}', {"x": "a"}, 0, seed) for seed in range(len(metas))]
    first: list[tuple[Any, ...]] = []
    again: list[tuple[Any, ...]] = []
    run_into(rollout, JOB, items, first)
    run_into(rollout, JOB, items, again)
    meta_at, kind_at = ROW_FIELDS.index("meta"), ROW_FIELDS.index("error_kind")
    for rows in (first, again):
        for meta, row in zip(metas, rows, strict=True):
            if meta.get("case_id") == "\ud800":
                assert row[kind_at] == "invalid_episode" and row[meta_at] is None
            else:
                assert row[meta_at] == json.dumps(meta, ensure_ascii=False, separators=(",", ":"))
                assert row[kind_at] is None


class _Label(str):
    """A str subclass (an enum's text, numpy's str_): JSON writes its text."""


def test_a_kept_text_is_never_the_text_of_a_meta_that_only_compares_equal_to_it() -> None:
    # Kept texts are found by the meta's items, and 1 == 1.0 == True, 0 == False, so only metas
    # of plain str are kept: each of these, in any order, stores its own JSON (a number, a bool,
    # null, a list, a str subclass and the plain texts around them).
    metas = [
        {"n": "1"}, {"n": 1}, {"n": True}, {"n": 1.0}, {"n": "1"}, {"n": 0}, {"n": False},
        {"n": None}, {"n": [1]}, {"n": {"m": "1"}}, {"n": _Label("1")}, {_Label("n"): "1"},
        {"n": "1", "m": 1}, {"n": "1", "m": "1"}, {"n": 1, "m": "1"},
    ]
    order = list(range(len(metas))) * 2 + list(reversed(range(len(metas))))

    def rollout(cfg: dict[str, Any], seed: int) -> Episode:
        return Episode("ok", 1, 5, metas[seed])

    out: list[tuple[Any, ...]] = []
    run_into(rollout, JOB, [('{"x":"a"}', {"x": "a"}, 0, seed) for seed in order], out)
    meta_at = ROW_FIELDS.index("meta")
    for seed, row in zip(order, out, strict=True):
        assert row[meta_at] == json.dumps(metas[seed], ensure_ascii=False, separators=(",", ":")), metas[seed]


def test_a_condition_repeating_its_meta_still_stores_each_episodes_own_text() -> None:
    # A condition's repeated meta is compared as a dict with the one it repeated last: the
    # same items in another order (another JSON), a value whose == raises (an array), two metas
    # taking turns, and the rollout's own dict mutated after its row was built must each store
    # their own text. Conditions of their own: the kept metas outlive a run (and a test).
    shared: dict[str, Any] = {}
    by_condition: dict[str, list[Any]] = {
        '{"x":"repeats"}': [
            {"b": "1", "a": "2"}, {"b": "1", "a": "2"}, {"a": "2", "b": "1"}, {"a": "2", "b": "1"},
            {"b": "1", "a": "2"}, {"case_id": "c"}, {"case_id": "c"}, {"case_id": np.array(["c", "c"])},
            {"case_id": "c", "n": 1}, {"case_id": "d"}, {"case_id": "c"}, {"case_id": "d"},
        ],
        '{"x":"mutates"}': ["shared:c", "shared:c", "shared:d", "shared:d", "shared:c", "shared:d"],
    }
    items = [(key, {"x": key}, 0, seed) for key, metas in by_condition.items() for seed in range(len(metas))]

    def rollout(cfg: dict[str, Any], seed: int) -> Episode:
        meta = by_condition[cfg["x"]][seed]
        if isinstance(meta, str):  # one dict object, changed after each row was built
            shared["case_id"] = meta.split(":")[1]
            meta = shared
        return Episode("ok", 1, 5, meta)

    out: list[tuple[Any, ...]] = []
    run_into(rollout, JOB, items, out)
    meta_at, kind_at = ROW_FIELDS.index("meta"), ROW_FIELDS.index("error_kind")
    texts = [row[meta_at] for row in out]
    ba, ab, c, d = '{"b":"1","a":"2"}', '{"a":"2","b":"1"}', '{"case_id":"c"}', '{"case_id":"d"}'
    assert texts[:7] == [ba, ba, ab, ab, ba, c, c]
    assert out[7][kind_at] == "invalid_episode"  # an array is no JSON: refused, as before
    assert texts[8:12] == ['{"case_id":"c","n":1}', d, c, d]
    assert texts[12:] == [c, c, d, d, c, d]
