"""The trace store: a traces folder (./proveai/traces or $PROVEAI_TRACES_DIR) on disk.

writing (one captured trace: its file, outcome rows, detection and index line), load (one
trace file into a closed Trace), index (manifest.json and its journal), outcomes
(outcomes.jsonl and the per-trace detection JSON), lock (the lock over the index files) and
reading (iter_traces and the filtered listing). The records themselves (Span, Trace,
CheckResult, OTLP <-> Trace) are proveai.traces.
"""
