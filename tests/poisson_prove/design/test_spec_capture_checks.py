"""[capture] checks refused at spec time: one error line naming the file and key, a did-you-mean
for a misspelt built-in, a next: line, nothing written."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import tree


def _spec(workdir: Path, checks: str) -> None:
    text = (workdir / "prove.toml").read_text(encoding="utf-8")
    (workdir / "prove.toml").write_text(f"{text}\n[capture]\nchecks = {checks}\n", encoding="utf-8")


def test_a_misspelt_check_is_refused_at_spec_time(prove, workdir) -> None:
    assert prove("init", "--example", "pipeline").returncode == 0
    spec = (workdir / "prove.toml").read_text(encoding="utf-8")
    cases = [
        ('["json_vaild@draft"]', ["unknown check 'json_vaild@draft'", 'did you mean "json_valid"', "next: "]),
        ('["no_such_module_here:check"]', ["no module named 'no_such_module_here'", "next: "]),
        ('"json_valid"', ["capture.checks must be a list of check names", "next: "]),
        ('["json_valid@"]', ["unknown check 'json_valid@'"]),
    ]
    for checks, fragments in cases:
        (workdir / "prove.toml").write_text(spec, encoding="utf-8")
        _spec(workdir, checks)
        before = tree(workdir)
        result = prove("sweep", "--yes", "--store", "store")
        assert_clean_error(result, 1, "prove.toml:", *fragments)
        assert result.stdout == ""
        assert tree(workdir) == before  # nothing written
