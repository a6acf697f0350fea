"""Reading a stored run's episode columns fast: only the columns asked for, strings as codes.

A comparison or an inspection of runs of a million episodes each must stay fast and small, so
the episodes are read column by column from Parquet with the string columns kept
dictionary-encoded: a condition, an outcome or an error kind becomes a small integer code and
every later step is NumPy over those codes. Numbers are read from the Arrow buffers: pyarrow's
own conversions import pandas, a second of start-up for every command.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

from poisson_prove.store.checks import check_unique
from poisson_prove.store.info import READ_TRIES, BatchesChanged, RunInfo
from poisson_prove.store.table import DICTIONARY_COLUMNS, episode_schema


def read_columns(info: RunInfo, columns: Sequence[str]) -> pa.Table:
    """The named columns of every stored batch, strings dictionary-encoded and unified."""
    for attempt in range(READ_TRIES):
        try:
            return _read_columns(info, columns)
        except BatchesChanged:  # compacted while read: list the files again
            if attempt + 1 == READ_TRIES:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


def _read_columns(info: RunInfo, columns: Sequence[str]) -> pa.Table:
    files = info.batch_files()
    schema = pa.schema([episode_schema().field(name) for name in columns])
    if not files:
        return schema.empty_table()
    wanted_dict = [name for name in columns if name in DICTIONARY_COLUMNS]

    def read(path: Path) -> pa.Table:
        return info.read_batch(path, columns, read_dictionary=wanted_dict)

    workers = min(len(files), os.cpu_count() or 1, 8)
    if workers > 1:
        # One file per thread (Parquet decoding releases the GIL): faster than one file at a
        # time with its columns decoded in parallel; map keeps the write order.
        with ThreadPoolExecutor(workers) as pool:
            tables = list(pool.map(read, files))
    else:
        tables = [read(f) for f in files]
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    if "cell" in columns and "replicate" in columns:
        check_unique(info, table)  # a copied batch file would be counted twice
    return table.unify_dictionaries()
