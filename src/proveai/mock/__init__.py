"""Mock model providers for tests: serve a captured trace, scripted replies, or failures.

Each returns a provider installed into the dispatch registry while active, as a context
manager (`with mock.responses([...]):`) or with `.start()` / `.stop()`; on exit the registry
is exactly as before. The pytest plugin exposes them as the `proveai_mock` fixture.
"""

from __future__ import annotations

from proveai.mock._registry import MockProvider
from proveai.mock.providers import FailureMock, ScriptedMock, TraceMock, failure, from_trace, responses

__all__ = ["FailureMock", "MockProvider", "ScriptedMock", "TraceMock", "failure", "from_trace", "responses"]
