"""Checking a stored run before trusting it, so a damaged or hand-edited run is one clear
refusal naming the file and what is wrong, never a KeyError or a double count deep in a command.

- `listing_problem(manifest)`: what keeps a run out of `runs`, `diff`, `check` and `inspect`
  (no run_id, a name that is not text, ...); None when it can be listed.
- `resume_problem(manifest)`: what keeps a listed run from being resumed (the target, the
  replicates, the salt, the conditions, the spec); None when it can be.
- `check_unique(info)`: refuse a run that stores a (condition, replicate) twice (a copied batch);
  `stored_keys(info)`: the (condition, replicate) pairs a run stores, checked so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from poisson_prove.errors import ProveError
from poisson_prove.store.info import RunInfo

if TYPE_CHECKING:
    import pyarrow as pa

_HEX = re.compile(r"^[0-9a-f]{8,64}$")


def _text(manifest: Mapping[str, Any], key: str) -> str | None:
    value = manifest.get(key)
    if not isinstance(value, str) or not value.strip():
        return f"{key} is {'missing' if key not in manifest else f'not text ({value!r:.40})'}"
    return None


def listing_problem(manifest: Any) -> str | None:
    """Why this document is not a run manifest a listing can use, or None."""
    if not isinstance(manifest, dict):
        return f"not a JSON object but a {type(manifest).__name__}"
    for key in ("run_id", "name"):
        problem = _text(manifest, key)
        if problem:
            return problem
    status = manifest.get("status", "partial")
    if status not in ("partial", "complete"):
        return f"status is {status!r}, not partial or complete"
    counts = manifest.get("counts")
    if counts is not None:
        if not isinstance(counts, dict):
            return "counts is not an object"
        for key in ("planned", "done", "errored"):
            value = counts.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                return f"counts.{key} is not a count ({value!r:.40})"
    for key in ("created", "paired_with", "paired_with_name", "salt"):
        value = manifest.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key} is not text ({value!r:.40})"
    if manifest.get("cells") is not None:
        problem = _conditions_problem(manifest.get("cells"))
        if problem:
            return problem
    for key in ("outcomes", "failures", "successes", "axis_order"):
        value = manifest.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return f"{key} is not a list of names ({value!r:.40})"
    return None


def _conditions_problem(conditions: Any) -> str | None:
    """Why a manifest's `cells` is not its list of conditions, or None."""
    if not isinstance(conditions, list):  # empty is a list: a run stopped before its first episode
        return f"cells is not a list of conditions ({conditions!r:.40})"
    for i, condition in enumerate(conditions):
        if not (
            isinstance(condition, dict)
            and isinstance(condition.get("key"), str)
            and isinstance(condition.get("label"), str)
            and isinstance(condition.get("cfg"), dict)
        ):
            return f"cells #{i + 1} is not an object with key, label and cfg"
    return None


def resume_problem(manifest: Mapping[str, Any]) -> str | None:
    """Why a resume cannot trust this manifest, or None."""
    for key in ("target", "spec_path"):
        problem = _text(manifest, key)
        if problem:
            return problem
    replicates = manifest.get("replicates")
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        return f"replicates is not a positive integer ({replicates!r:.40})"
    salt = manifest.get("salt")
    if not isinstance(salt, str) or not _HEX.match(salt):
        return f"salt is not 8 to 64 hex digits ({salt!r:.40})"
    if not isinstance(manifest.get("spec"), dict):
        return "spec is not an object"
    problem = _conditions_problem(manifest.get("cells"))
    if problem:
        return problem
    design = manifest.get("design")
    if design is not None and not isinstance(design, dict):
        return "design is not an object"
    if isinstance(design, dict) and design.get("max_mde") is not None:
        value = design["max_mde"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            return f"design.max_mde is not a fraction in (0, 1] ({value!r:.40})"
    return None


def _distinct_pairs(table: pa.Table) -> int:
    """How many distinct (condition, replicate) pairs the table holds: NumPy on integer codes (Arrow's
    group_by would import pandas, which `diff` and `inspect` never load)."""
    # Read from the Arrow buffers as the comparison does: pyarrow's own conversions import pandas.
    import numpy as np  # numpy: ~100 ms, only when a run's rows are checked
    import pyarrow as pa  # pyarrow: ~160 ms, only when a run's rows are checked

    from poisson_prove.store.codes import coded, column_numbers  # numpy and pyarrow, as above

    condition_keys = table.column("cell")
    if pa.types.is_dictionary(condition_keys.type):  # one dictionary per batch file: unify them first
        condition_keys = pa.table({"cell": condition_keys}).unify_dictionaries().column("cell")
    codes = coded(condition_keys).codes
    replicates = column_numbers(table.column("replicate"), np.int64, 0)
    keys = codes.astype(np.int64) * (int(replicates.max()) + 1) + replicates.astype(np.int64)
    if int(keys.max()) < 50_000_000:  # a count per key beats a sort
        return int(np.count_nonzero(np.bincount(keys)))
    return int(np.unique(keys).size)


def check_unique(info: RunInfo, table: pa.Table | None = None) -> None:
    """Refuse a run that stores some (condition, replicate) twice: a batch file copied or duplicated
    in its folder. Counting those rows would double-count; `table` holds the run's condition and
    replicate columns when the caller has read them already."""
    if table is None:
        table = info.read_episodes(["cell", "replicate"])
    if table.num_rows == 0:
        return
    distinct = _distinct_pairs(table)
    if distinct == table.num_rows:
        return
    # Rare and fatal: now read file by file to name the files involved.
    first: dict[tuple[str, int], str] = {}
    files: set[str] = set()
    for path in info.batch_files():
        part = info.read_batch(path, ["cell", "replicate"])
        for key in zip(part.column("cell").to_pylist(), part.column("replicate").to_pylist(), strict=True):
            seen = first.get(key)
            if seen is None:
                first[key] = path.name
            else:
                files.update((seen, path.name))
    twice = table.num_rows - distinct
    named = ", ".join(sorted(files)) or "one batch file"
    raise ProveError(
        f'run "{info.name}" stores {twice:,} episodes more than once (the same condition and '
        f"replicate in {named}): a batch file was copied into {info.episodes_dir}; counting "
        "it would double-count",
        suggestions=[
            f"move the copies out of {info.episodes_dir}, keeping one file of each, "
            f'then: poisson-prove runs; resume with poisson-prove sweep --resume "{info.name}"'
        ],
    )


def stored_keys(info: RunInfo) -> set[tuple[str, int]]:
    """The (condition, replicate) pairs already stored: what a resume must not run again."""
    table = info.read_episodes(["cell", "replicate"])
    check_unique(info, table)
    return set(zip(table.column("cell").to_pylist(), table.column("replicate").to_pylist(), strict=True))
