"""The command that produced a trace, recorded at Trace.__enter__ so it can be re-run.

argv is the interpreter's own argument list after the interpreter path (sys.orig_argv[1:]),
so `[python, *argv]` run from `project_root/cwd` repeats the command. Strings carry any
undecodable bytes as surrogate escapes: os.fsencode(arg) gives back the exact bytes.
Environment variables are recorded by name only, never by value.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proveai.store import project_root

ENV_PREFIXES = (
    "PROVEAI_", "OPENAI_", "ANTHROPIC_", "OPENROUTER_", "FIREWORKS_", "AZURE_OPENAI_", "TOGETHER_",
    "GROQ_", "MISTRAL_", "GEMINI_", "GOOGLE_API_KEY", "DEEPSEEK_", "OLLAMA_", "COHERE_",
    "AWS_BEDROCK_", "HF_TOKEN",
)
# interpreter options that consume the next argument (python --help)
_OPTIONS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}


@dataclass(frozen=True)
class InterpreterArgs:
    """What an interpreter's argument list asks of it, read as CPython reads it."""

    mode: str  # script | module | command | stdin | interactive
    target: str | None  # the script's path or the module's name
    why_not: str | None  # why the command cannot be re-run, when it cannot
    options: tuple[tuple[str, str | None], ...] = ()  # the interpreter's options before it: (flag, value)


def split_interpreter_argv(orig: Sequence[str]) -> InterpreterArgs:
    """What `orig` (an interpreter's argument list, its path first) runs. `snapshot verify`
    reads a recorded argv with it to know what a re-run would run."""
    options: list[tuple[str, str | None]] = []

    def found(mode: str, target: str | None, why_not: str | None) -> InterpreterArgs:
        return InterpreterArgs(mode, target, why_not, tuple(options))

    i = 1
    while i < len(orig):
        arg = orig[i]
        if arg == "-":
            return found("stdin", None, "the script was read from stdin")
        if arg == "--":  # the end of the options: the next argument is the script, whatever it looks like
            if i + 1 < len(orig):
                return found("script", orig[i + 1], None)
            break
        if arg.startswith("--"):
            value = orig[i + 1] if arg in _OPTIONS_WITH_VALUE and i + 1 < len(orig) else None
            options.append((arg, value))
            i += 2 if arg in _OPTIONS_WITH_VALUE else 1
            continue
        if not arg.startswith("-"):
            return found("script", arg, None)
        # a cluster of one-letter options, e.g. -B, -Bc 'code', -mjson.tool, -W error
        consumed_next = False
        for j, letter in enumerate(arg[1:], start=1):
            rest = arg[j + 1 :]
            if letter == "c":
                return found("command", None, "run with python -c: the command text is not a file to re-run")
            if letter == "m":
                module = rest or (orig[i + 1] if i + 1 < len(orig) else None)
                return found("module", module, None if module else "python -m without a module")
            if letter in "WX":
                consumed_next = not rest
                options.append((f"-{letter}", rest or (orig[i + 1] if i + 1 < len(orig) else None)))
                break
            options.append((f"-{letter}", None))
        i += 2 if consumed_next else 1
    return found("interactive", None, "an interactive session has no command to re-run")


def _in_notebook() -> bool:
    return "ipykernel" in sys.modules or ("IPython" in sys.modules and hasattr(sys, "ps1"))


def capture_invocation() -> dict[str, Any]:
    """Interpreter, argv, module/script, cwd relative to the project root, env names."""
    cwd = Path.cwd().resolve()
    root = project_root(cwd)
    orig = list(getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv])
    parsed = split_interpreter_argv(orig)
    mode, target, why_not = parsed.mode, parsed.target, parsed.why_not
    if _in_notebook():
        mode, why_not = "notebook", "captured in a notebook: cells have no command to re-run"
    elif mode == "script" and sys.flags.interactive:
        why_not = "python -i: the session continued interactively after the script"
    script: str | None = None
    if mode == "script" and target is not None:
        script_path = Path(target)
        absolute = script_path if script_path.is_absolute() else cwd / script_path
        try:
            script = os.path.relpath(absolute, cwd)
        except ValueError:
            script = str(absolute)
    try:
        relative_cwd = cwd.relative_to(root).as_posix()
    except ValueError:
        relative_cwd = "."
    env_names = sorted(name for name in os.environ if name.startswith(ENV_PREFIXES))
    return {
        "python": sys.executable,
        "argv": orig[1:],
        "module": target if mode == "module" else None,
        "script": script,
        "cwd": relative_cwd or ".",
        "project_root": str(root),
        "env_names": env_names,
        "rerunnable": why_not is None,
        "why_not": why_not,
    }
