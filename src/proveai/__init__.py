"""proveai: capture, snapshot and replay multi-agent LLM pipelines.

The public API map of the docs, listed in `__all__`. Each name lives in its own module and is
imported on first use (`prove_common.lazy`), so `import proveai` stays cheap for code that only
decorates agents; type checkers see the explicit imports below, and tests/proveai/
test_public_api.py holds that the list, the imports and the map name the same things.

`proveai.Trace` is the record `load_trace` returns; the live session `trace()` returns is its
subclass `proveai.capture.LiveTrace`, and `Trace(...)` called to open a trace builds one.

Layers, lowest first. A module imports only from its own package, from a lower layer, or
from poisson_prove's public modules; tests/proveai/test_layers.py holds this (no circle, no
upward import, a function-level import only for a heavy library, with its reason).

0. errors, version: proveai's error type and exit codes (`ProveAIExit`); the version
1. traces: trace data: Span, Trace (the closed record), CheckResult, the current-frame
   context and current_span(), JSON-safe values, OTLP <-> Trace, topology
2. store: every file under ./proveai/ (its docstring lists them): the layout (project_root,
   trace_files, check_name), the trace store (index, lock, load, reading, writing,
   outcomes), snapshot files, verify and replay runs, baselines and experiments, the judge
   cache
3. providers: model providers and their registry; record LLM calls on the current span
4. cache, mock: the on-disk response cache (and `proveai.dispatch`, the registry under the
   verify-time cache policy); scripted providers for tests
5. diff: the one verdict model (Status, Tier, Grade), tier1 (structural), tier2
   (embeddings + calibration), judge (tier 3), grading
6. capture: the live session: @monitor, trace()/LiveTrace, checks (incl. LLMJudge),
   exporters, invocation
7. replay: engine, reinvoke, runner, attribution (edges -> verdicts)
8. ci: GitHub Actions: the workflow `ci init` writes, which snapshots a pull request
   touched, the step summary
9. snapshot, engine: the snapshot CI gate; the detection engine's client and local server
10. render, narrative: all drawing, terminal and HTML; plain-language narratives
11. report, pytest: the replay report's public address; the pytest plugin
12. cli: the command line, one module per verb
This module (the public map) is above everything; nothing inside the package imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prove_common.lazy import lazy_exports

if TYPE_CHECKING:
    from proveai import mock
    from proveai.cache import EngineCache, EngineCacheMiss
    from proveai.cache import dispatch_cached as dispatch
    from proveai.capture.checks import (
        Check,
        LLMJudge,
        RuleCheck,
        assert_json,
        contract_conformance,
        not_contains,
        output_length,
        regex_match,
        schema_match,
        tool_called,
    )
    from proveai.capture.exporters import FileExporter, add_exporter
    from proveai.capture.monitor import monitor
    from proveai.capture.trace import Trace, trace
    from proveai.diff.grading import EdgeVerdict
    from proveai.diff.judge import llm_judge
    from proveai.diff.tier1 import text_diff
    from proveai.engine.client import ProveAI
    from proveai.engine.handlers import on_detection
    from proveai.engine.model import AnalyzeResponse
    from proveai.errors import ProveAIError
    from proveai.providers import AnthropicProvider, OpenAICompatibleProvider, Provider, register_provider
    from proveai.replay.attribution import attribute_edges
    from proveai.replay.engine import ReplayedSpan, ReplayedTrace, replay_span, replay_trace
    from proveai.snapshot.model import AgentDefinition, ExpectedIO, Snapshot
    from proveai.store import Store
    from proveai.store.artifacts import Baseline, Experiment
    from proveai.store.runs import Run
    from proveai.store.traces.load import load_trace
    from proveai.store.traces.outcomes import Detection, record_outcome
    from proveai.store.traces.reading import iter_traces
    from proveai.traces.trace import CheckResult, Span
    from proveai.version import __version__

__all__ = [
    "AgentDefinition",
    "AnalyzeResponse",
    "AnthropicProvider",
    "Baseline",
    "Check",
    "CheckResult",
    "Detection",
    "EdgeVerdict",
    "EngineCache",
    "EngineCacheMiss",
    "ExpectedIO",
    "Experiment",
    "FileExporter",
    "LLMJudge",
    "OpenAICompatibleProvider",
    "ProveAI",
    "ProveAIError",
    "Provider",
    "ReplayedSpan",
    "ReplayedTrace",
    "RuleCheck",
    "Run",
    "Snapshot",
    "Span",
    "Store",
    "Trace",
    "__version__",
    "add_exporter",
    "assert_json",
    "attribute_edges",
    "contract_conformance",
    "dispatch",
    "iter_traces",
    "llm_judge",
    "load_trace",
    "mock",
    "monitor",
    "not_contains",
    "on_detection",
    "output_length",
    "record_outcome",
    "regex_match",
    "register_provider",
    "replay_span",
    "replay_trace",
    "schema_match",
    "text_diff",
    "tool_called",
    "trace",
]

# public name -> "module:attribute" ("module" alone: the module itself), imported on first use
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "__version__": "proveai.version:__version__",
        "ProveAIError": "proveai.errors:ProveAIError",
        # Capture
        "monitor": "proveai.capture.monitor:monitor",
        # the record (load_trace's type); loading it declares the live LiveTrace
        "Trace": "proveai.capture.trace:Trace",
        "trace": "proveai.capture.trace:trace",
        "CheckResult": "proveai.traces.trace:CheckResult",
        "Span": "proveai.traces.trace:Span",
        "FileExporter": "proveai.capture.exporters:FileExporter",
        "add_exporter": "proveai.capture.exporters:add_exporter",
        "Check": "proveai.capture.checks:Check",
        "LLMJudge": "proveai.capture.checks:LLMJudge",
        "RuleCheck": "proveai.capture.checks:RuleCheck",
        "assert_json": "proveai.capture.checks:assert_json",
        "contract_conformance": "proveai.capture.checks:contract_conformance",
        "not_contains": "proveai.capture.checks:not_contains",
        "output_length": "proveai.capture.checks:output_length",
        "regex_match": "proveai.capture.checks:regex_match",
        "schema_match": "proveai.capture.checks:schema_match",
        "tool_called": "proveai.capture.checks:tool_called",
        "Detection": "proveai.store.traces.outcomes:Detection",
        "record_outcome": "proveai.store.traces.outcomes:record_outcome",
        "load_trace": "proveai.store.traces.load:load_trace",
        "iter_traces": "proveai.store.traces.reading:iter_traces",
        # Store + artifacts
        "Store": "proveai.store:Store",
        "Baseline": "proveai.store.artifacts:Baseline",
        "Experiment": "proveai.store.artifacts:Experiment",
        "Run": "proveai.store.runs:Run",
        "AgentDefinition": "proveai.snapshot.model:AgentDefinition",
        "ExpectedIO": "proveai.snapshot.model:ExpectedIO",
        "Snapshot": "proveai.snapshot.model:Snapshot",
        "EngineCache": "proveai.cache:EngineCache",
        "EngineCacheMiss": "proveai.cache:EngineCacheMiss",
        "dispatch": "proveai.cache:dispatch_cached",
        # Replay engine + diff
        "ReplayedSpan": "proveai.replay.engine:ReplayedSpan",
        "ReplayedTrace": "proveai.replay.engine:ReplayedTrace",
        "replay_span": "proveai.replay.engine:replay_span",
        "replay_trace": "proveai.replay.engine:replay_trace",
        "text_diff": "proveai.diff.tier1:text_diff",
        "llm_judge": "proveai.diff.judge:llm_judge",
        "attribute_edges": "proveai.replay.attribution:attribute_edges",
        "EdgeVerdict": "proveai.diff.grading:EdgeVerdict",
        # Provider layer
        "AnthropicProvider": "proveai.providers:AnthropicProvider",
        "OpenAICompatibleProvider": "proveai.providers:OpenAICompatibleProvider",
        "Provider": "proveai.providers:Provider",
        "register_provider": "proveai.providers:register_provider",
        # Mock surface
        "mock": "proveai.mock",
        # Engine integration (original surface)
        "ProveAI": "proveai.engine.client:ProveAI",
        "on_detection": "proveai.engine.handlers:on_detection",
        "AnalyzeResponse": "proveai.engine.model:AnalyzeResponse",
    },
)
