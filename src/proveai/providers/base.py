"""The Provider protocol, the response object every provider returns, and provider errors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from proveai.errors import ProveAIError, ProveAIExit
from proveai.traces.context import current_span

Message = Mapping[str, Any]


@dataclass(frozen=True)
class ProviderResponse:
    """One model reply.

    `text` is the assistant's text; `messages` the reply as chat messages
    ([{"role": "assistant", "content": text}]); `usage` is {"input_tokens", "output_tokens"};
    `raw` the decoded JSON body; `cached` is True when served from a ResponseCache.
    """

    text: str
    model: str
    messages: tuple[dict[str, Any], ...] = ()
    usage: dict[str, int] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    cached: bool = False

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "model": self.model,
            "messages": [dict(m) for m in self.messages],
            "usage": dict(self.usage),
            "raw": self.raw,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, cached: bool = False) -> ProviderResponse:
        return cls(
            text=str(data.get("text", "")),
            model=str(data.get("model", "")),
            messages=tuple(dict(m) for m in data.get("messages") or ()),
            usage={k: int(v) for k, v in (data.get("usage") or {}).items()},
            raw=dict(data.get("raw") or {}),
            cached=cached,
        )


@runtime_checkable
class Provider(Protocol):
    """Anything that can answer a chat request: `call` and `supports`.

    `call(messages, model, **kwargs)` returns a ProviderResponse (custom providers may return
    a plain str; proveai wraps it). `supports(model)` says whether this provider serves it.
    A `provider_id` attribute (str), when present, keys the response cache; without it the
    class name is used.
    """

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse | str: ...

    def supports(self, model: str) -> bool: ...


class ProviderError(ProveAIError):
    """A model call that failed: names the model, the endpoint and what to set or check.

    `reason` is a short form (e.g. "ANTHROPIC_API_KEY not set") used in judge rationales.
    The API key's value never appears in any message.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        suggestions: Sequence[str] = (),
        status: int | None = None,
        exit_code: int = ProveAIExit.USAGE,
    ) -> None:
        super().__init__(message, suggestions=suggestions, exit_code=exit_code)
        self.reason = reason or message
        self.status = status


def provider_id_of(provider: object) -> str:
    """The identity a cache key uses: the provider's `provider_id`, else its class name."""
    ident = getattr(provider, "provider_id", None)
    return str(ident) if ident else type(provider).__name__


def as_response(result: ProviderResponse | str | Any, model: str) -> ProviderResponse:
    """Normalise what a (possibly custom) provider returned into a ProviderResponse."""
    if isinstance(result, ProviderResponse):
        return result
    text = result if isinstance(result, str) else str(getattr(result, "text", result))
    return ProviderResponse(text=text, model=model, messages=({"role": "assistant", "content": text},))


def record_on_current_span(
    messages: Sequence[Message], response: ProviderResponse, model: str, kwargs: Mapping[str, Any]
) -> None:
    """Let a monitored agent's open span record the request actually sent and the reply."""
    builder = current_span()
    if builder is None:
        return
    builder.record_llm_call(
        [dict(m) for m in messages],
        [dict(m) for m in response.messages] or response.text,
        model,
        dict(response.usage),
        dict(kwargs),
    )
