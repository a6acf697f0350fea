"""proveai: capture, snapshot and replay multi-agent LLM pipelines.

The public API map of the docs. Each name lives in its own module and is imported on first
use, so `import proveai` stays cheap for code that only decorates agents.

Layers, lowest first. A module imports only from its own package, from a lower layer, or
from poisson_prove's public modules; tests/proveai/test_layers.py holds this (no circle, no
upward import, a function-level import only for a heavy library, with its reason).

0. errors, store (the ./proveai/ layout, project_root, trace_files, check_name), version
1. traces    trace data and its store format: Span, Trace (the closed record), CheckResult,
             the current-frame context and current_span(), JSON-safe values, OTLP <-> Trace,
             topology, the trace store (index, lock, load, reading, outcomes)
2. providers model providers and their registry; record LLM calls on the current span
3. cache | mock  the on-disk response cache (and `proveai.dispatch`, the registry under the
             verify-time cache policy) | scripted providers for tests
4. diff      tier1 (structural), tier2 (embeddings + calibration), judge (tier 3), grading
5. capture   the live session: @monitor, trace()/the live Trace, checks (incl. LLMJudge),
             exporters, invocation
6. replay    engine, reinvoke, runner, artifacts, attribution (edges -> verdicts)
7. snapshot | engine
8. report | narrative
9. pytest | ci  the pytest plugin | the GitHub Actions workflow `ci init` writes
10. cli
This module (the public map) is above everything; nothing inside the package imports it.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "__version__": "proveai.version",
    # Capture
    "monitor": "proveai.capture.monitor",
    "trace": "proveai.capture.trace",
    "Trace": "proveai.capture.trace",
    "Span": "proveai.traces.trace",
    "FileExporter": "proveai.capture.exporters",
    "add_exporter": "proveai.capture.exporters",
    "Check": "proveai.capture.checks",
    "RuleCheck": "proveai.capture.checks",
    "LLMJudge": "proveai.capture.checks",
    "CheckResult": "proveai.traces.trace",
    "assert_json": "proveai.capture.checks",
    "regex_match": "proveai.capture.checks",
    "tool_called": "proveai.capture.checks",
    "not_contains": "proveai.capture.checks",
    "output_length": "proveai.capture.checks",
    "schema_match": "proveai.capture.checks",
    "contract_conformance": "proveai.capture.checks",
    "record_outcome": "proveai.traces.outcomes",
    "Detection": "proveai.traces.outcomes",
    "load_trace": "proveai.traces.load",
    "iter_traces": "proveai.traces.reading",
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
    "text_diff": "proveai.diff.tier1",
    "llm_judge": "proveai.diff.judge",
    "attribute_edges": "proveai.replay.attribution",
    "EdgeVerdict": "proveai.diff.grading",
    # Provider layer
    "Provider": "proveai.providers",
    "OpenAICompatibleProvider": "proveai.providers",
    "AnthropicProvider": "proveai.providers",
    "register_provider": "proveai.providers",
    "dispatch": "proveai.cache:dispatch_cached",
    # Mock surface
    "mock": "proveai.mock",
    # Engine integration (original surface)
    "ProveAI": "proveai.engine.client",
    "on_detection": "proveai.engine.handlers",
    "AnalyzeResponse": "proveai.engine.model",
}

__all__ = [*_LAZY]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'proveai' has no attribute {name!r}")
    module_name, _, attribute = where.partition(":")  # "module:attribute" when the names differ
    module = importlib.import_module(module_name)
    # a name that is also its module's name (proveai.capture.monitor.monitor) is the attribute;
    # the module itself only when it defines no such attribute (proveai.mock)
    value = getattr(module, attribute or name, module)
    globals()[name] = value
    return value
