"""Installing a mock provider into the dispatch registry and restoring it exactly afterwards.

A mock registers its patterns at the front of the registry (user registrations win, newest
first) and, on exit, restores the registrations it found (`snapshot_registry` /
`restore_registry`), so nested mocks unwind exactly.
"""

from __future__ import annotations

import abc
import fnmatch
import threading
import uuid
from collections.abc import Sequence
from typing import Any

from proveai.providers import registry
from proveai.providers.base import Message, ProviderResponse, record_on_current_span

_install_lock = threading.RLock()


class MockProvider(abc.ABC):
    """Base of the mock providers: answers `respond(messages, model, kwargs)` and records the
    call on the open span exactly like a real provider, so captured traces look real."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        # a unique id: the response cache never serves one mock's reply to another
        self.provider_id = f"proveai-mock:{type(self).__name__}:{uuid.uuid4().hex}"
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._saved: registry.RegistrySnapshot | None = None  # set while installed

    def supports(self, model: str) -> bool:
        return any(fnmatch.fnmatchcase(model, p) for p in self.patterns)

    @abc.abstractmethod
    def respond(self, messages: Sequence[Message], model: str, kwargs: dict[str, Any]) -> str:
        """The reply text for one call (or raise ProviderError, as a real provider would)."""

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse:
        with self._lock:
            self.calls.append(
                {"messages": [dict(m) for m in messages], "model": model, "kwargs": dict(kwargs)}
            )
            text = self.respond(messages, model, kwargs)
        response = ProviderResponse(
            text=text, model=model, messages=({"role": "assistant", "content": text},), usage={}
        )
        record_on_current_span(messages, response, model, kwargs)
        return response

    # ---- context manager / start-stop -----------------------------------------------------------
    def start(self) -> MockProvider:
        with _install_lock:
            self._saved = registry.snapshot_registry()
            for pattern in reversed(self.patterns):
                registry.register_provider(pattern, self)
        return self

    def stop(self) -> None:
        with _install_lock:
            if self._saved is not None:
                registry.restore_registry(self._saved)
                self._saved = None

    def __enter__(self) -> MockProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
