"""OpenAICompatibleProvider: any endpoint that speaks POST {base_url}/chat/completions."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from proveai.providers._http import HTTPChatProvider
from proveai.providers.base import Message, ProviderError, ProviderResponse

OPENAI_BASE_URL = "https://api.openai.com/v1"


class OpenAICompatibleProvider(HTTPChatProvider):
    """Chat completions over httpx.

    `api_key`: sent as `Authorization: Bearer`. When None it is read at call time from the
    first set variable of `api_key_env`; if none is set and the endpoint is not api.openai.com
    (a local Ollama / vLLM, say) the request goes without a key. `base_url`: when None, read
    from `base_url_env` at call time, else OpenAI's. `patterns`: globs `supports` accepts
    (empty: every model). The connection pool closes with `close()` / `with provider:`.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | None = None,
        max_retries: int | None = None,
        backoff_s: float | None = None,
        api_key_env: Sequence[str] = ("OPENAI_API_KEY",),
        base_url_env: str | None = "OPENAI_BASE_URL",
        patterns: Sequence[str] = (),
    ) -> None:
        super().__init__(timeout=timeout, max_retries=max_retries, backoff_s=backoff_s, patterns=patterns)
        self._api_key = api_key
        self._base_url = base_url
        self.api_key_env = tuple(api_key_env)
        self.base_url_env = base_url_env

    @property
    def base_url(self) -> str:
        url = self._base_url or (os.environ.get(self.base_url_env) if self.base_url_env else None)
        return (url or OPENAI_BASE_URL).rstrip("/")

    @property
    def provider_id(self) -> str:
        return f"openai-compatible:{self.base_url}"

    def _key(self) -> str | None:
        if self._api_key:
            return self._api_key
        for name in self.api_key_env:
            if os.environ.get(name):
                return os.environ[name]
        return None

    def headers(self, model: str) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        key = self._key()
        if key:
            headers["authorization"] = f"Bearer {key}"
        elif urlparse(self.base_url).hostname == "api.openai.com":
            names = " or ".join(self.api_key_env) or "an API key"
            raise ProviderError(
                f"model {model!r} at {self.base_url}: no API key; set {names}",
                reason=f"{names} not set",
                suggestions=(f"export {self.api_key_env[0] if self.api_key_env else 'OPENAI_API_KEY'}=...",),
            )
        return headers

    def call(self, messages: Sequence[Message], model: str, **kwargs: Any) -> ProviderResponse:
        url = f"{self.base_url}/chat/completions"
        body = {"model": model, "messages": [dict(m) for m in messages], **kwargs}
        return self.exchange(
            url,
            body,
            model=model,
            headers=self.headers(model),
            auth_hint=self.api_key_env,
            parse=parse_chat_completion,
            messages=messages,
            kwargs=kwargs,
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleProvider(base_url={self.base_url!r})"


def parse_chat_completion(data: dict[str, Any], url: str, model: str) -> ProviderResponse:
    """The text, role and usage of a /chat/completions reply, or a ProviderError naming what is missing."""
    try:
        message = data["choices"][0]["message"]
        content = message.get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ProviderError(
            f"model {model!r} at {url}: malformed reply (no choices[0].message)",
            reason=f"malformed reply from {url}",
        ) from None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise ProviderError(
            f"model {model!r} at {url}: malformed reply (message.content is {type(content).__name__})",
            reason=f"malformed reply from {url}",
        )
    usage_raw = data.get("usage")
    if not isinstance(usage_raw, dict):
        usage_raw = {}
    usage = {
        "input_tokens": int(usage_raw.get("prompt_tokens") or 0),
        "output_tokens": int(usage_raw.get("completion_tokens") or 0),
    }
    return ProviderResponse(
        text=content,
        model=str(data.get("model") or model),
        messages=({"role": str(message.get("role") or "assistant"), "content": content},),
        usage=usage,
        raw=data,
    )
