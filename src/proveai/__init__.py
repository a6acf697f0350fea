"""proveai: capture, snapshot and replay multi-agent LLM pipelines.

The public API map of the docs. Each name lives in its own module and is imported on first
use, so `import proveai` stays cheap for code that only decorates agents.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    # Capture
    "monitor": "proveai.capture.monitor",
    "trace": "proveai.capture.trace",
    "Trace": "proveai.capture.trace",
    "Span": "proveai.capture.trace",
    "FileExporter": "proveai.capture.exporters",
    "add_exporter": "proveai.capture.exporters",
    "Check": "proveai.capture.checks",
    "RuleCheck": "proveai.capture.checks",
    "LLMJudge": "proveai.capture.checks",
    "CheckResult": "proveai.capture.checks",
    "assert_json": "proveai.capture.checks",
    "regex_match": "proveai.capture.checks",
    "tool_called": "proveai.capture.checks",
    "not_contains": "proveai.capture.checks",
    "output_length": "proveai.capture.checks",
    "schema_match": "proveai.capture.checks",
    "contract_conformance": "proveai.capture.checks",
    "record_outcome": "proveai.capture.outcomes",
    "Detection": "proveai.capture.outcomes",
    "load_trace": "proveai.capture.reading",
    "iter_traces": "proveai.capture.reading",
    # Store + artifacts
    "Store": "proveai.store",
    "Baseline": "proveai.replay.artifacts",
    "Experiment": "proveai.replay.artifacts",
    "Run": "proveai.replay.artifacts",
    "Snapshot": "proveai.snapshot.model",
    "AgentDefinition": "proveai.snapshot.model",
    "ExpectedIO": "proveai.snapshot.model",
    "EngineCache": "proveai.cache",
    "EngineCacheMiss": "proveai.cache",
    # Replay engine + diff
    "replay_span": "proveai.replay.engine",
    "replay_trace": "proveai.replay.engine",
    "ReplayedSpan": "proveai.replay.engine",
    "ReplayedTrace": "proveai.replay.engine",
    "text_diff": "proveai.replay.diff",
    "llm_judge": "proveai.replay.judge",
    "attribute_edges": "proveai.replay.attribution",
    "EdgeVerdict": "proveai.replay.attribution",
    # Provider layer
    "Provider": "proveai.providers",
    "OpenAICompatibleProvider": "proveai.providers",
    "AnthropicProvider": "proveai.providers",
    "register_provider": "proveai.providers",
    "dispatch": "proveai.providers",
    # Mock surface
    "mock": "proveai.mock",
    # Engine integration (original surface)
    "ProveAI": "proveai.engine.client",
    "on_detection": "proveai.engine.handlers",
    "AnalyzeResponse": "proveai.engine.model",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'proveai' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    # a name that is also its module's name (proveai.capture.monitor.monitor) is the attribute;
    # the module itself only when it defines no such attribute (proveai.mock)
    value = getattr(module, name, module)
    globals()[name] = value
    return value
