"""Trace data and its store format: what a reader of captured traces needs, and nothing live.

Span, Trace (the closed record) and CheckResult (trace), the current-frame context variable
(context), JSON-safe values (jsonsafe), OTLP JSON <-> Trace (otlp), the agent topology of a
trace (topology), and the ./proveai/traces store: file lock (lock), index (index), outcomes
and detections (outcomes), loading one file (load) and listing/filtering (reading).
"""
