"""`sweep --help` says what the flags do today: every backend, and --concurrency on all of them."""

from __future__ import annotations

import re

from poisson_prove.backends import BACKENDS


def _entries(text: str) -> dict[str, str]:
    """Each flag's help entry, its wrapped lines joined: `--backend {...}` -> its text."""
    entries: dict[str, str] = {}
    flag = None
    for line in text.splitlines():
        if line.startswith("  -"):
            flag = line.split()[0]
            entries[flag] = line
        elif flag is not None and line.startswith("   "):
            entries[flag] += " " + line.strip()
        else:
            flag = None
    return entries


def test_help_names_every_backend_and_files_concurrency_with_the_common_flags(prove) -> None:
    result = prove("sweep", "--help")
    assert result.returncode == 0 and result.stderr == ""
    text = result.stdout
    backend = _entries(text)["--backend"]
    assert "local, modal or burla" not in backend
    named = re.findall(r"\b(local|dask|ray|modal|burla)\b", backend.split("}", 1)[1])
    assert set(named) == set(BACKENDS), backend
    common, remote = text.split("\nremote backends (", 1)
    concurrency = _entries(common)["--concurrency"]
    assert "on every backend" in concurrency and "local" in concurrency
    assert "--concurrency" not in remote
    assert "containers at once" not in text
