"""The MAST failure taxonomy (Cemri et al., "Why Do Multi-Agent LLM Systems Fail?", 2025).

All fourteen modes are named so a response can be read against the paper; the engine assigns
only the modes in ASSIGNED (see LAYER_MODES), each from something it observed in the trace.
"""

from __future__ import annotations

CATEGORIES = {
    "FC1": "Specification issues",
    "FC2": "Inter-agent misalignment",
    "FC3": "Task verification",
}

MODES: dict[str, str] = {
    "FM-1.1": "Disobey task specification",
    "FM-1.2": "Disobey role specification",
    "FM-1.3": "Step repetition",
    "FM-1.4": "Loss of conversation history",
    "FM-1.5": "Unaware of termination conditions",
    "FM-2.1": "Conversation reset",
    "FM-2.2": "Fail to ask for clarification",
    "FM-2.3": "Task derailment",
    "FM-2.4": "Information withholding",
    "FM-2.5": "Ignored other agent's input",
    "FM-2.6": "Reasoning-action mismatch",
    "FM-3.1": "Premature termination",
    "FM-3.2": "No or incomplete verification",
    "FM-3.3": "Incorrect verification",
}

# layer -> the mode it assigns (the judge layer repeats the mode of the finding it examines)
LAYER_MODES = {
    "checks": "FM-1.1",  # the output broke the contract a check encodes
    "errors": "FM-3.1",  # the step raised and ended before finishing its task
    "loops": "FM-1.3",  # the step ran more often than the agent usually does
    "path": "FM-2.3",  # the run took (or skipped) a route known-good runs never do
}
ASSIGNED = tuple(LAYER_MODES.values())


def category_of(code: str) -> str:
    """'FM-1.3' -> 'Specification issues'."""
    return CATEGORIES.get("FC" + code.removeprefix("FM-").split(".")[0], "")


def label(code: str) -> str:
    """'FM-1.3' -> 'FM-1.3 Step repetition'."""
    return f"{code} {MODES.get(code, '')}".strip()


def remediation(code: str, agent: str, evidence: str) -> str:
    """One actionable hint for a root cause of mode `code` at `agent`."""
    hints = {
        "FM-1.1": (
            f"tighten {agent}'s prompt or output contract so it meets the failed check "
            f"({evidence}); pin the fix with `proveai snapshot verify`"
        ),
        "FM-3.1": (
            f"fix the exception in {agent} ({evidence}) or catch it and return a usable "
            "fallback, so downstream agents get real input"
        ),
        "FM-1.3": (
            f"give {agent} an explicit termination condition and cap its iterations at what "
            f"known-good runs need ({evidence})"
        ),
        "FM-2.3": (
            f"check {agent}'s routing decision: {evidence}; compare with a known-good trace "
            "(`proveai run --baseline NAME`)"
        ),
    }
    return hints.get(code, f"inspect {agent}: {evidence}")
