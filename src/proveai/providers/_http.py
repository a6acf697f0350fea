"""POST JSON with timeouts and retries (backoff on 429/5xx and connection errors, honouring
Retry-After), and the base every HTTP provider shares: one pooled client per provider object,
closed by `close()`, by leaving a `with` block, when the provider is collected, or at exit."""

from __future__ import annotations

import email.utils
import fnmatch
import os
import random
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from proveai.providers.base import Message, ProviderError, ProviderResponse, record_on_current_span

if TYPE_CHECKING:
    import httpx

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_RETRY_AFTER_S = 60.0
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF_S = 0.5


def _env_number(name: str, default: float, *, integer: bool = False) -> float:
    """A non-negative number from the environment, else `default` (a bad value raises)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        value = -1
    if value < 0 or value != value:
        kind = "a whole number" if integer else "a number"
        raise ProviderError(f"{name}={raw!r} is not {kind} >= 0", suggestions=(f"unset {name} or fix it",))
    return value


def http_settings(
    timeout: float | None, max_retries: int | None, backoff_s: float | None
) -> tuple[float, int, float]:
    """Explicit arguments, else PROVEAI_PROVIDER_TIMEOUT / _MAX_RETRIES / _BACKOFF, else defaults."""
    return (
        timeout if timeout is not None else _env_number("PROVEAI_PROVIDER_TIMEOUT", DEFAULT_TIMEOUT_S),
        max_retries
        if max_retries is not None
        else int(_env_number("PROVEAI_PROVIDER_MAX_RETRIES", DEFAULT_MAX_RETRIES, integer=True)),
        backoff_s if backoff_s is not None else _env_number("PROVEAI_PROVIDER_BACKOFF", DEFAULT_BACKOFF_S),
    )


class HTTPEndpoint:
    """Timeouts, retries and one pooled httpx.Client, built on first use (a client per call
    would pay TLS setup every time) and closed exactly once: `close()`, `with provider:`,
    garbage collection of the provider, or interpreter exit (weakref.finalize covers the last
    two, so no socket is left for the garbage collector to warn about)."""

    def __init__(
        self, *, timeout: float | None, max_retries: int | None, backoff_s: float | None
    ) -> None:
        timeout, max_retries, backoff_s = http_settings(timeout, max_retries, backoff_s)
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._client_lock = threading.Lock()
        self._http_client: httpx.Client | None = None
        self._closer: weakref.finalize | None = None

    def http_client(self) -> httpx.Client:
        with self._client_lock:
            if self._http_client is None:
                import httpx  # httpx: ~120 ms, only when a request is sent

                client = httpx.Client(follow_redirects=False)
                self._http_client = client
                self._closer = weakref.finalize(self, client.close)
            return self._http_client

    def close(self) -> None:
        """Close the connection pool; a later call opens a new one."""
        with self._client_lock:
            closer, self._closer, self._http_client = self._closer, None, None
        if closer is not None:
            closer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def post(self, url: str, body: Mapping[str, Any], *, headers: Mapping[str, str], model: str,
             auth_hint: Sequence[str]) -> dict[str, Any]:
        return post_json(
            url,
            body,
            headers=headers,
            model=model,
            timeout=self.timeout,
            max_retries=self.max_retries,
            backoff_s=self.backoff_s,
            auth_hint=auth_hint,
            client=self.http_client(),
        )


class HTTPChatProvider(HTTPEndpoint):
    """What the OpenAI-compatible and Anthropic providers share: glob `patterns` for
    `supports`, and a call that posts, parses the reply and records it on the open span."""

    def __init__(
        self,
        *,
        timeout: float | None,
        max_retries: int | None,
        backoff_s: float | None,
        patterns: Sequence[str],
    ) -> None:
        super().__init__(timeout=timeout, max_retries=max_retries, backoff_s=backoff_s)
        self.patterns = tuple(patterns)

    def supports(self, model: str) -> bool:
        return not self.patterns or any(fnmatch.fnmatchcase(model, p) for p in self.patterns)

    def exchange(
        self,
        url: str,
        body: Mapping[str, Any],
        *,
        model: str,
        headers: Mapping[str, str],
        auth_hint: Sequence[str],
        parse: Callable[[dict[str, Any], str, str], ProviderResponse],
        messages: Sequence[Message],
        kwargs: Mapping[str, Any],
    ) -> ProviderResponse:
        data = self.post(url, body, headers=headers, model=model, auth_hint=auth_hint)
        response = parse(data, url, model)
        record_on_current_span(messages, response, model, kwargs)
        return response


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), capped."""
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(when.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER_S)


def post_json(
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    model: str,
    timeout: float,
    max_retries: int,
    backoff_s: float,
    auth_hint: Sequence[str] = (),
    client: httpx.Client,
) -> dict[str, Any]:
    """POST `body` to `url` and return the decoded JSON object, or raise ProviderError.

    Retries up to `max_retries` times on 429/5xx and transport errors, sleeping the server's
    Retry-After when given, else exponential backoff with jitter. `auth_hint` names the
    variables that supply the key, for the message of a 401/403.
    """
    import httpx  # httpx: ~120 ms, only when a request is sent

    attempt = 0
    while True:
        status: int | None = None
        wait: float | None = None
        try:
            response = client.post(url, json=dict(body), headers=dict(headers), timeout=timeout)
        except httpx.TimeoutException as exc:
            problem = f"timed out after {timeout:g}s"
            cause: Exception = exc
        except httpx.HTTPError as exc:
            problem = f"could not connect ({type(exc).__name__}: {exc})"
            cause = exc
        else:
            status = response.status_code
            if status < 400:
                return _decode(response, url, model)
            problem = f"HTTP {status}: {_snippet(response.text)}"
            cause = ProviderError(problem, status=status)
            if status not in RETRY_STATUSES:
                raise _status_error(status, problem, url, model, auth_hint) from None
            wait = retry_after_seconds(response.headers.get("retry-after"))
        if attempt >= max_retries:
            raise ProviderError(
                f"model {model!r} at {url}: {problem} (after {attempt + 1} attempt(s))",
                reason=f"{url}: {problem}",
                status=status,
                suggestions=("check that the endpoint is up, or raise the provider's timeout/max_retries",),
            ) from cause
        if wait is None:
            wait = backoff_s * (2**attempt) * (1 + random.random() / 4)
        time.sleep(wait)
        attempt += 1


def _decode(response: Any, url: str, model: str) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ProviderError(
            f"model {model!r} at {url}: the reply is not a JSON object: {_snippet(response.text)}",
            reason=f"malformed reply from {url}",
        )
    return data


def _status_error(status: int, problem: str, url: str, model: str, auth_hint: Sequence[str]) -> ProviderError:
    if status in (401, 403):
        names = " or ".join(auth_hint) or "the provider's API key"
        return ProviderError(
            f"model {model!r} at {url}: {problem}",
            reason=f"{url} refused the key (HTTP {status}); check {names}",
            status=status,
            suggestions=(f"check {names}",),
        )
    if status == 404:
        return ProviderError(
            f"model {model!r} at {url}: {problem}",
            reason=f"{url}: HTTP 404",
            status=status,
            suggestions=("check the base URL (it usually ends in /v1) and the model name",),
        )
    return ProviderError(f"model {model!r} at {url}: {problem}", reason=f"{url}: {problem}", status=status)


def _snippet(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
