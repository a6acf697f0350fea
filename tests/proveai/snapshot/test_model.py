"""snapshot/model.py: the content hashes a pinned snapshot holds are frozen. A snapshot pinned
by an older version must verify unchanged, so these literal hashes (taken before the
serialization moved to prove_common.jsonio) may never change."""

from __future__ import annotations

import json

from proveai.snapshot.model import AgentDefinition, ExpectedIO, content_hash


def test_content_hashes_of_a_known_snapshot_are_pinned() -> None:
    value = {"reply": "Bonjour, ça va? — ✓", "n": [1, 2.5, None, True], "z": {"b": 1, "a": "x"}}
    assert content_hash(value) == "sha256:6b8e9b2582642de48bc235cafab6a31bdcbfdad8d003ec7f8494deed0b9ffdb5"
    io = ExpectedIO(inputs={"q": "café"}, output={"answer": "naïve", "score": 0.75})
    assert io.inputs_hash == "sha256:3315782d097fc186254bf98e51c471ffbde503c6c02fb34a2d0647951540a25a"
    assert io.output_hash == "sha256:9f9c82367c5b967de2ed9ec800f9d8bc56dcb217cd104088011149ef3ad9324b"


def test_what_an_agent_read_and_imported_is_pinned_and_an_older_pin_reads_as_unrecorded() -> None:
    recorded = AgentDefinition("qa", source_file="pipeline.py", reads=("prompts/qa.md",), imports=())
    data = json.loads(json.dumps(recorded.to_dict()))
    assert data["reads"] == ["prompts/qa.md"] and data["imports"] == []
    assert AgentDefinition.from_dict("qa", data, "x") == recorded
    # pinned before reads were recorded: the keys are absent, read back as None (targeting: in doubt),
    # and written back without them, so the file of an older pin does not change
    older = {k: v for k, v in data.items() if k not in ("reads", "imports")}
    loaded = AgentDefinition.from_dict("qa", older, "x")
    assert loaded.reads is None and loaded.imports is None
    assert loaded.to_dict() == older
