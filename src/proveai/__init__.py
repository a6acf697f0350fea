"""proveai: capture, snapshot and replay multi-agent LLM pipelines."""

__version__ = "0.1.0"
