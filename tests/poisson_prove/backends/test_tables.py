"""backends/tables.py: the keys and value types each backend table of a spec takes, and the
one `error:` line (with the closest key and the table's keys) for anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from poisson_prove.backends.tables import BACKEND_TABLES, validate_backend_table
from poisson_prove.errors import ProveError


def test_every_backend_takes_the_retry_keys_and_the_users_cost_per_episode() -> None:
    assert set(BACKEND_TABLES) == {"local", "dask", "ray", "modal", "burla"}
    for name, schema in BACKEND_TABLES.items():
        assert {"infra_errors", "infra_retries", "infra_backoff", "cost_per_episode"} <= set(schema), name
        remote = name != "local"
        assert ("worker_retries" in schema) == remote, name  # a lost worker exists only remotely


def test_a_valid_table_comes_back_as_a_plain_dict() -> None:
    table = {"concurrency": 8, "mode": "threads", "infra_errors": ["RateLimitError"], "infra_backoff": 2}
    checked = validate_backend_table("local", table, "prove.toml")
    assert checked == table and type(checked) is dict
    # a number key takes an int or a float; an int key only an int
    sized = {"cpu": 0.5, "memory": 2048}
    assert validate_backend_table("modal", sized, "s.toml") == sized


def test_an_unknown_key_names_the_closest_one_and_lists_the_tables_keys() -> None:
    with pytest.raises(ProveError) as caught:
        validate_backend_table("local", {"concurency": 4}, "prove.toml")
    error = caught.value
    assert error.message == "prove.toml: unknown key 'concurency' in [local] (did you mean \"concurrency\"?)"
    assert list(error.suggestions) == [
        "the keys of [local] are: concurrency, cost_per_episode, infra_backoff, infra_errors, "
        "infra_retries, mode"
    ]
    with pytest.raises(ProveError, match=r"^s.toml: unknown key 'zzz' in \[ray\]$"):
        validate_backend_table("ray", {"zzz": 1}, "s.toml")


@pytest.mark.parametrize(
    ("name", "key", "value", "wanted"),
    [
        ("local", "concurrency", "4", "int"),
        ("local", "concurrency", 4.0, "int"),
        ("local", "concurrency", True, "int"),  # TOML's true is not a count
        ("dask", "connect_timeout", "5s", "int or float"),
        ("modal", "gpu", 1, "str"),
        ("burla", "infra_errors", "RateLimitError", "list"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_the_type(
    name: str, key: str, value: object, wanted: str
) -> None:
    with pytest.raises(ProveError) as caught:
        validate_backend_table(name, {key: value}, "prove.toml")
    assert caught.value.message == f"prove.toml: [{name}] {key} must be {wanted}, got {value!r}"


def test_modal_image_sections_are_kept_as_they_are() -> None:
    image = {"pip_install": ["numpy"], "python_version": "3.12"}
    checked = validate_backend_table("modal", {"image": image, "concurrency": 2}, "prove.toml")
    assert checked == {"image": image, "concurrency": 2}
    assert checked["image"] is not image  # a copy: the spec's own table is never changed
    with pytest.raises(ProveError, match=r"\[burla\] image must be str, got \{"):
        validate_backend_table("burla", {"image": image}, "prove.toml")  # only Modal has sections


def test_dask_takes_tls_files_from_the_spec_folder_and_true_or_false_switches(tmp_path: Path) -> None:
    spec = tmp_path / "project" / "prove.toml"
    table = {"address": "tls://10.0.0.5:8786", "tls_ca_file": "certs/ca.pem", "tls_client_key": "/etc/k.pem",
             "require_encryption": True, "upload": False, "env": ["OPENAI_API_KEY"]}
    checked = validate_backend_table("dask", table, str(spec))
    assert checked["tls_ca_file"] == str(tmp_path / "project" / "certs" / "ca.pem")
    assert checked["tls_client_key"] == "/etc/k.pem"
    switches = (checked["require_encryption"], checked["upload"], checked["env"])
    assert switches == (True, False, ["OPENAI_API_KEY"])
    with pytest.raises(ProveError) as caught:
        validate_backend_table("dask", {"upload": "yes"}, "s.toml")
    assert caught.value.message == "s.toml: [dask] upload must be true or false, got 'yes'"
    with pytest.raises(ProveError):  # a switch is still no count: concurrency = true is refused
        validate_backend_table("dask", {"concurrency": True}, "s.toml")
