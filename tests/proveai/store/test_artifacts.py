"""Baselines and experiments as files: versions kept in history and addressable as NAME@N, the
prompt stored with its hash, and one clear error for every name, version or file that is wrong."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from proveai import regex_match
from proveai.errors import ProveAIError
from proveai.store import Store
from proveai.store.artifacts import Baseline, Experiment, prompt_override, split_override
from tests.proveai.store.store_kit import capture


def good_and_bad_traces(traces: Path, good: int, bad: int) -> list[str]:
    ids = [capture(traces, checks=[regex_match("lookup", "found")]).trace_id for _ in range(good)]
    for _ in range(bad):
        capture(traces, checks=[regex_match("lookup", "nothing like this")])
    return ids


def test_a_baseline_refreshed_keeps_each_version_addressable(tmp_path: Path) -> None:
    store = Store(tmp_path)
    first_ids = good_and_bad_traces(store.traces_dir, good=2, bad=1)
    created = Baseline.create("goods", store, store.traces_dir, {"outcome": "good"})
    assert (created.version, created.trace_ids) == (1, tuple(first_ids))
    more = good_and_bad_traces(store.traces_dir, good=1, bad=1)
    refreshed = created.refresh(store)
    assert refreshed.version == 2 and refreshed.trace_ids == (*first_ids, *more)

    on_disk = yaml.safe_load(Baseline.path_for("goods", store).read_text())  # an independent reader
    assert on_disk["version"] == 2 and on_disk["filter"] == {"outcome": "good"}
    assert [h["version"] for h in on_disk["history"]] == [1]
    assert on_disk["history"][0]["trace_ids"] == first_ids
    assert Baseline.load("goods", store).trace_ids == refreshed.trace_ids
    assert Baseline.load("goods@1", store).trace_ids == tuple(first_ids)
    assert Baseline.load("goods@2", store).version == 2
    assert [b.name for b in Baseline.list(store)] == ["goods"]


def test_baseline_names_and_versions_that_do_not_exist_are_one_clear_error(tmp_path: Path) -> None:
    store = Store(tmp_path)
    good_and_bad_traces(store.traces_dir, good=1, bad=0)
    Baseline.create("goods", store, store.traces_dir, {"outcome": "good"})
    with pytest.raises(ProveAIError, match="already exists") as exists:
        Baseline.create("goods", store, store.traces_dir, {})
    assert exists.value.suggestions[0].startswith("proveai baseline refresh goods  (re-apply its filter")
    known = r"no baseline named 'bads' in .*baselines; known: goods"
    with pytest.raises(ProveAIError, match=known) as unknown:
        Baseline.load("bads", store)
    assert unknown.value.suggestions == ("proveai baseline create bads --filter outcome=good",)
    with pytest.raises(ProveAIError, match=r"baseline 'goods' has no version 7; versions: \[1\]"):
        Baseline.load("goods@7", store)
    with pytest.raises(ProveAIError, match="baseline version must be a number: 'goods@latest'"):
        Baseline.load("goods@latest", store)
    with pytest.raises(ProveAIError, match="--filter: unknown filter key 'colour'"):
        Baseline.create("odd", store, store.traces_dir, {"colour": "red"})
    assert not Baseline.path_for("odd", store).exists()  # nothing written on bad input
    Baseline.path_for("torn", store).write_text("name: torn\nversion: [")
    with pytest.raises(ProveAIError, match=r"cannot read baseline file .*torn\.yaml"):
        Baseline.load("torn", store)


def test_an_experiment_stores_the_prompt_itself_with_its_hash(tmp_path: Path) -> None:
    store = Store(tmp_path)
    prompt = tmp_path / "qa_v2.md"
    prompt.write_text("Check the reply. Be strict.", encoding="utf-8")
    Experiment.new("fix-qa", store, {"qa_check": str(prompt)}, {"draft": "gpt-4o"}, "stricter QA")
    prompt.write_text("changed after saving", encoding="utf-8")  # the experiment keeps what it saved
    loaded = Experiment.load("fix-qa", store)
    qa = loaded.overrides["qa_check"]
    assert qa["prompt"] == "Check the reply. Be strict."
    assert qa["prompt_sha256"] == hashlib.sha256(b"Check the reply. Be strict.").hexdigest()
    assert loaded.replay_overrides() == {"qa_check": {"prompt": "Check the reply. Be strict."},
                                         "draft": {"model": "gpt-4o"}}
    assert loaded.description == "stricter QA" and [e.name for e in Experiment.list(store)] == ["fix-qa"]


def test_experiment_mistakes_are_one_clear_error_and_write_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with pytest.raises(ProveAIError, match="an experiment needs at least one override"):
        Experiment.new("empty", store, {})
    with pytest.raises(ProveAIError, match=r"--override qa=missing\.md: no such file"):
        Experiment.new("typo", store, {"qa": "missing.md"})
    with pytest.raises(ProveAIError, match="invalid experiment name"):
        Experiment.new("../up", store, {}, {"draft": "gpt-4o"})
    assert not store.experiments_dir.exists()
    with pytest.raises(ProveAIError, match=r"no experiment named 'nope'") as unknown:
        Experiment.load("nope", store)
    assert unknown.value.suggestions == ("proveai experiment new nope --override AGENT=PATH",)
    store.experiments_dir.mkdir(parents=True)
    Experiment.path_for("flat", store).write_text("name: flat\noverrides: [draft]\n")
    with pytest.raises(ProveAIError, match=r"malformed experiment \(overrides must map agent -> settings\)"):
        Experiment.load("flat", store)


def test_a_yaml_file_that_does_not_parse_is_one_line_naming_where(tmp_path: Path) -> None:
    """PyYAML's own text quotes the source under a caret on three more lines; the error is one
    line, and a python tag is refused by name, never built (safe_load)."""
    store = Store(tmp_path)
    store.baselines_dir.mkdir(parents=True)
    marker = tmp_path / "PWNED"
    cases = {
        ": : - [unclosed\n": (
            "line 1, column 1: while parsing a block mapping: expected <block end>, but found ':'"
        ),
        f'!!python/object/apply:os.system ["touch {marker}"]\n': (
            "line 1, column 1: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/apply:os.system'"
        ),
        "[" * 20_000 + "]" * 20_000: "nested too deeply",
    }
    for text, fragment in cases.items():
        Baseline.path_for("good", store).write_text(text)
        with pytest.raises(ProveAIError) as caught:
            Baseline.load("good", store)
        where = Baseline.path_for("good", store)
        assert caught.value.message.startswith(f"cannot read baseline file {where}: ")
        assert fragment in caught.value.message
        assert "\n" not in caught.value.message
    assert not marker.exists()


def test_override_files_are_read_only_when_regular_and_agent_names_may_hold_equals(tmp_path: Path) -> None:
    prompt = tmp_path / "p.md"
    prompt.write_text("be brief", encoding="utf-8")
    assert split_override(f"tone=formal={prompt}") == ("tone=formal", str(prompt))
    assert split_override("qa = b=c.md") == ("qa", "b=c.md")  # no such file: at the first "="
    with pytest.raises(ProveAIError, match=r"--override expects AGENT=PATH, got '=p\.md'"):
        split_override("=p.md")
    assert prompt_override("qa", prompt)["prompt"] == "be brief"
    with pytest.raises(ProveAIError) as refused:
        prompt_override("qa", "/dev/zero")
    assert refused.value.message == "--override qa=/dev/zero: it is a character device, not a prompt file"
