"""The CI recipe in docs/ci.md is valid workflow YAML whose steps use real commands and flags."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from poisson_prove.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_ci_recipe_is_valid_yaml_with_real_commands(capsys) -> None:
    text = (DOCS / "ci.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", text, re.S)
    assert block, "docs/ci.md has no yaml block"
    workflow = yaml.safe_load(block.group(1))
    steps = workflow["jobs"]["prove"]["steps"]
    commands = [s["run"] for s in steps if "run" in s and s["run"].startswith("poisson-prove ")]
    assert [c.split()[1] for c in commands] == ["sweep", "sweep", "check", "dashboard"]
    assert "--pair-with latest" in commands[1]
    for command in commands:
        argv = shlex.split(re.sub(r"\$\{\{[^}]*\}\}", "x", command.split("#")[0]))[1:]
        try:
            main([argv[0], "--help"])
        except SystemExit as stop:
            assert stop.code == 0, (command, capsys.readouterr().err)
        help_text = capsys.readouterr().out
        for flag in (word for word in argv if word.startswith("--")):
            assert f"{flag} " in help_text or f"{flag}\n" in help_text, (flag, command)
