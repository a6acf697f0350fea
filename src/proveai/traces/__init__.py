"""Trace data: what a reader of captured traces needs, and nothing live or on disk.

Span, Trace (the closed record) and CheckResult (trace), the current-frame context variable
(context), JSON-safe values (jsonsafe), OTLP JSON <-> Trace (otlp) and the agent topology of a
trace (topology). The traces folder that stores them is proveai.store.traces.
"""
