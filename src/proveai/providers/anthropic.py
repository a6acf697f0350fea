"""AnthropicProvider: POST {base_url}/v1/messages with x-api-key and anthropic-version."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from proveai.providers._http import HTTPChatProvider
from proveai.providers.base import Message, ProviderError, ProviderResponse

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024


class AnthropicProvider(HTTPChatProvider):
    """Anthropic's Messages API over httpx.

    System messages are moved to the top-level `system` field, as the API requires;
    `max_tokens` defaults to 1024. `api_key`/`base_url` default, at call time, to
    ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (else api.anthropic.com).
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | None = None,
        max_retries: int | None = None,
        backoff_s: float | None = None,
        version: str = ANTHROPIC_VERSION,
        patterns: Sequence[str] = ("claude-*",),
    ) -> None:
        super().__init__(timeout=timeout, max_retries=max_retries, backoff_s=backoff_s, patterns=patterns)
        self._api_key = api_key
        self._base_url = base_url
        self.version = version

    @property
    def base_url(self) -> str:
        url = self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_BASE_URL
        url = url.rstrip("/")
        return url[: -len("/v1")] if url.endswith("/v1") else url

    @property
    def provider_id(self) -> str:
        return f"anthropic:{self.base_url}"

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse:
        url = f"{self.base_url}/v1/messages"
        key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ProviderError(
                f"model {model!r} at {url}: no API key; set ANTHROPIC_API_KEY",
                reason="ANTHROPIC_API_KEY not set",
                suggestions=(
                    "export ANTHROPIC_API_KEY=...",
                    "or route this model elsewhere: PROVEAI_PROVIDER_PATTERN / PROVEAI_PROVIDER_BASE_URL",
                ),
            )
        system = [str(m.get("content", "")) for m in messages if m.get("role") == "system"]
        chat = [dict(m) for m in messages if m.get("role") != "system"]
        body: dict[str, Any] = {"model": model, "messages": chat, "max_tokens": DEFAULT_MAX_TOKENS}
        if system:
            body["system"] = "\n\n".join(system)
        body.update(kwargs)
        headers = {"content-type": "application/json", "x-api-key": key, "anthropic-version": self.version}
        return self.exchange(
            url,
            body,
            model=model,
            headers=headers,
            auth_hint=("ANTHROPIC_API_KEY",),
            parse=parse_message,
            messages=messages,
            kwargs=kwargs,
        )

    def __repr__(self) -> str:
        return f"AnthropicProvider(base_url={self.base_url!r})"


def parse_message(data: dict[str, Any], url: str, model: str) -> ProviderResponse:
    """The text and usage of a /v1/messages reply, or a ProviderError naming what is missing."""
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise ProviderError(
            f"model {model!r} at {url}: malformed reply (no content list)",
            reason=f"malformed reply from {url}",
        )
    text = "".join(
        str(block.get("text", ""))
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text"
    )
    usage_raw = data.get("usage")
    if not isinstance(usage_raw, dict):
        usage_raw = {}
    usage = {
        "input_tokens": int(usage_raw.get("input_tokens") or 0),
        "output_tokens": int(usage_raw.get("output_tokens") or 0),
    }
    return ProviderResponse(
        text=text,
        model=str(data.get("model") or model),
        messages=({"role": "assistant", "content": text},),
        usage=usage,
        raw=data,
    )
