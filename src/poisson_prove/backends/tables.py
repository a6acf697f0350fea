"""Validation of the backend tables of a sweep spec: [local], [dask], [ray], [modal], [burla].

spec.py calls `validate_backend_table` for each such table it finds; the backends own which
keys they take. Each schema maps a key to the Python types it accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from poisson_prove.errors import ProveError
from prove_common.suggest import did_you_mean

Schema = Mapping[str, tuple[type, ...]]

_NUMBER = (int, float)

# Keys every backend reads about infrastructure errors (see backends/__init__.py).
_RETRIES: dict[str, tuple[type, ...]] = {
    "infra_errors": (list,),  # exception type names retried as infrastructure errors
    "infra_retries": (int,),
    "infra_backoff": _NUMBER,  # seconds before the first retry; doubles, capped at 30
}
_REMOTE_RETRIES: dict[str, tuple[type, ...]] = {**_RETRIES, "worker_retries": (int,)}

BACKEND_TABLES: dict[str, Schema] = {
    "local": {
        "concurrency": (int,),
        "mode": (str,),  # "auto" | "threads" | "async" | "processes"
        **_RETRIES,
    },
    "dask": {
        "address": (str,),
        "connect_timeout": _NUMBER,  # seconds to reach `address`
        # distributed.security.Security for `address` (files, relative to the spec's folder);
        # without them Dask's own config (distributed.comm.tls.*, DASK_* variables) applies
        "tls_ca_file": (str,),
        "tls_client_cert": (str,),
        "tls_client_key": (str,),
        "require_encryption": (bool,),
        "upload": (bool,),  # ship the spec's folder to the workers (default: on, with `address`)
        "env": (list,),  # names of environment variables set on the workers from the sweep's
        "n_workers": (int,),
        "threads_per_worker": (int,),
        "concurrency": (int,),
        **_REMOTE_RETRIES,
    },
    "ray": {
        "address": (str,),
        "num_cpus": (int,),
        "concurrency": (int,),
        **_REMOTE_RETRIES,
    },
    "modal": {
        "concurrency": (int,),
        "est_seconds": _NUMBER,
        "app_name": (str,),
        "cpu": _NUMBER,
        "memory": (int,),  # MiB, as Modal takes it
        "gpu": (str,),
        "timeout": _NUMBER,
        "max_cost": _NUMBER,
        **_REMOTE_RETRIES,
    },
    "burla": {
        "concurrency": (int,),
        "est_seconds": _NUMBER,
        "cpu": _NUMBER,
        "memory": (int,),  # GB, as Burla takes it
        "gpu": (str,),
        "max_cost": _NUMBER,
        "image": (str,),
        **_REMOTE_RETRIES,
    },
}

# Keys whose values are files: a relative one is read from the spec's folder, as values_from is.
PATH_KEYS = {"dask": ("tls_ca_file", "tls_client_cert", "tls_client_key")}

# Every backend takes the user's own cost per episode (model calls), which `--budget` adds to
# the backend's compute estimate (see poisson_prove.sweep.budget).
for _schema in BACKEND_TABLES.values():
    _schema["cost_per_episode"] = _NUMBER  # type: ignore[index]


def validate_backend_table(name: str, table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Check one backend table's keys and value types; `where` names the file for errors.

    Sub-tables of [modal] (e.g. [modal.image]) are image sections, kept as they are. A file
    named by a key of PATH_KEYS is made absolute against the folder of `where` (the spec file).
    """
    schema = BACKEND_TABLES[name]
    out: dict[str, Any] = {}
    for key, value in table.items():
        if name == "modal" and isinstance(value, Mapping):
            out[key] = dict(value)
            continue
        if key not in schema:
            raise ProveError(
                f"{where}: unknown key {key!r} in [{name}]{did_you_mean(key, schema)}",
                suggestions=[f"the keys of [{name}] are: {', '.join(sorted(schema))}"],
            )
        types = schema[key]
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            wanted = " or ".join("true or false" if t is bool else t.__name__ for t in types)
            raise ProveError(f"{where}: [{name}] {key} must be {wanted}, got {value!r}")
        if key in PATH_KEYS.get(name, ()):
            value = str((Path(where).parent / Path(str(value)).expanduser()).absolute())
        out[key] = value
    return out
