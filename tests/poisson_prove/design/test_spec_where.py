"""Where a key is in a spec's text: its line under a [table] header, in a dotted key at the top
level, or the header's own line; an unknown key refused with the file, the line and the keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from poisson_prove.design.spec_where import Where, check_keys, is_target_ref
from poisson_prove.errors import ProveError

TEXT = """target = "agent:rollout"
replicates = 10
axes.model.values = ["a", "b"]

[declare]
outcomes = ["ok", "bad"]
"failures" = ["bad"]

[axes.temperature]
type = "continuous"
"""


@pytest.mark.parametrize(
    ("table", "key", "line"),
    [
        ("", "replicates", 2),
        ("axes.model", "values", 3),  # a dotted key at the top level
        ("declare", "outcomes", 6),
        ("declare", "failures", 7),  # a quoted key
        ("declare", None, 5),  # the header itself
        ("declare", "successes", 5),  # not written: the table's header
        ("axes.temperature", "type", 10),
        ("capture", "instrument", None),  # no such table
    ],
)
def test_each_key_is_found_on_its_line(table: str, key: str | None, line: int | None) -> None:
    assert Where(Path("prove.toml"), TEXT).line_of(table, key) == line


def test_an_unknown_key_names_the_file_line_and_the_keys_allowed() -> None:
    where = Where(Path("prove.toml"), TEXT)
    with pytest.raises(ProveError) as caught:
        check_keys(where, "declare", {"outcomes": [], "failurs": []}, ("outcomes", "failures"))
    assert caught.value.message.startswith("prove.toml:5: unknown key 'failurs' in [declare]")
    assert 'did you mean "failures"' in caught.value.message
    assert list(caught.value.suggestions) == ["the keys of [declare] are: outcomes, failures"]


@pytest.mark.parametrize(
    ("text", "is_ref"),
    [("agent:rollout", True), ("pkg.mod:run_1", True), ("agent", False), ("agent:", False), ("1x:f", False)],
)
def test_a_target_reads_module_colon_function(text: str, is_ref: bool) -> None:
    assert is_target_ref(text) is is_ref
