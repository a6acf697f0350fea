"""Every `--json` document `poisson-prove` prints, written one way, with its schema id.

`dumps` is the one writer of `sweep`, `runs`, `import`, `diff`, `check` and `inspect --json`:
UTF-8 text indented by 2 spaces, non-ASCII characters as themselves (never `\\u` escapes), a
number that is not finite (NaN, infinity) as null (JSON has no spelling for them, and a
standard reader refuses them), and one newline at the end (docs/sweep-spec.md, `--json`).
`SCHEMAS` holds every document's schema id, one per verb; a document changes its id when a
field changes meaning.
"""

from __future__ import annotations

import json as _json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from poisson_prove.comparison.result import Comparison

# verb -> the schema id of the document its --json prints
SCHEMAS = {
    "sweep": "poisson-prove.sweep/1",  # the plan, and how the sweep ended (render/plan.py)
    "runs": "poisson-prove.runs/1",  # the store's runs
    "import": "poisson-prove.import/1",  # what an import stored
    "diff": "poisson-prove.diff/1",  # a comparison; `check` prints the same document
    "inspect": "poisson-prove.inspect/1",  # one run's errors and trails, or one episode
}
SWEEP_SCHEMA = SCHEMAS["sweep"]
RUNS_SCHEMA = SCHEMAS["runs"]
IMPORT_SCHEMA = SCHEMAS["import"]
DIFF_SCHEMA = SCHEMAS["diff"]
INSPECT_SCHEMA = SCHEMAS["inspect"]


def _finite(value: Any) -> Any:
    """NaN and infinities become null: JSON has no spelling for them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def dumps(document: dict[str, Any]) -> str:
    """`document` as the text every --json prints (the format above), ending in a newline."""
    return _json.dumps(_finite(document), ensure_ascii=False, allow_nan=False, indent=2) + "\n"


def comparison_document(
    comparison: Comparison, *, notes: Sequence[str] = (), command: str = "diff", exit_code: int = 0
) -> dict[str, Any]:
    return {
        "schema": DIFF_SCHEMA,
        "command": command,
        "exit_code": exit_code,
        **comparison.to_dict(),
        "notes": list(notes),
    }
