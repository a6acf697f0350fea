"""Snapshots: pin known-good agent I/O, re-run the pipeline, grade every agent (the CI gate)."""

from proveai.snapshot.model import AgentDefinition, Capture, ExpectedIO, Snapshot

__all__ = ["AgentDefinition", "Capture", "ExpectedIO", "Snapshot"]
