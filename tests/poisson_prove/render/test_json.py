"""The one writer of every `--json` document: strict JSON (no NaN or infinity, which a standard
reader refuses), text kept as written, indented by 2; one table of schema ids; and a diff
document that is the comparison's every number under its schema id, read back with the
standard library. tests/poisson_prove/render/test_json_documents.py runs each verb for real."""

from __future__ import annotations

import json
import math
from pathlib import Path

import poisson_prove
from poisson_prove.render import plan
from poisson_prove.render.json import DIFF_SCHEMA, SCHEMAS, comparison_document, dumps
from tests.poisson_prove.runs import store_with_pair


def _refuse(constant: str) -> float:
    raise AssertionError(f"{constant} is not JSON")


def test_non_finite_numbers_become_null_at_any_depth_and_text_stays_as_written() -> None:
    document = {
        "rate": math.nan,
        "bounds": [0.25, math.inf, (-math.inf, 2)],
        "nested": {"p": math.nan, "label": "déjà vu ✓"},
    }
    text = dumps(document)
    assert json.loads(text, parse_constant=_refuse) == {
        "rate": None,
        "bounds": [0.25, None, [None, 2]],
        "nested": {"p": None, "label": "déjà vu ✓"},
    }
    assert "déjà vu ✓" in text and text.endswith("}\n")
    assert text.splitlines()[1] == '  "rate": null,'  # indented by 2, one key a line


def test_one_table_names_every_documents_schema() -> None:
    assert SCHEMAS == {
        "sweep": "poisson-prove.sweep/1",
        "runs": "poisson-prove.runs/1",
        "import": "poisson-prove.import/1",
        "diff": "poisson-prove.diff/1",
        "inspect": "poisson-prove.inspect/1",
    }
    assert SCHEMAS["sweep"] == plan.JSON_SCHEMA  # the sweep's document takes its id from the table


def test_a_diff_document_carries_the_schema_and_every_field_of_the_comparison(tmp_path: Path) -> None:
    store, before, after = store_with_pair(tmp_path)
    comparison = poisson_prove.compare(before.name, after.name, store=store)
    document = comparison_document(comparison, notes=["a note"], command="check", exit_code=1)
    read_back = json.loads(dumps(document), parse_constant=_refuse)
    assert read_back["schema"] == DIFF_SCHEMA == "poisson-prove.diff/1"
    assert (read_back["command"], read_back["exit_code"], read_back["notes"]) == ("check", 1, ["a note"])
    fields = comparison.to_dict()
    assert set(read_back) == set(fields) | {"schema", "command", "exit_code", "notes"}
    assert read_back["any_worse"] == comparison.any_worse
    assert read_back["method_phrase"] == comparison.method_phrase
