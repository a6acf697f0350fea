"""proveai.mock against the real registry, real providers and a real model server."""

from __future__ import annotations

from pathlib import Path

import pytest

from proveai import FileExporter, dispatch, mock, monitor, trace
from proveai.providers import ProviderError, registrations
from proveai.providers.openai import OpenAICompatibleProvider
from proveai.providers.registry import register_provider, reset_providers
from tests.proveai.model_server import ModelServer

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def clean_registry():
    reset_providers()
    yield
    reset_providers()


def ask(model: str = "gpt-4o-mini", messages=MESSAGES) -> str:
    return dispatch(model).call(messages, model).text


def test_responses_in_order_then_refuse_and_restore() -> None:
    before = registrations()
    with mock.responses(["one", "two"]) as scripted:
        assert ask() == "one"
        assert ask("claude-haiku-4-5") == "two"
        with pytest.raises(ProviderError, match="used up"):
            ask()
        assert len(scripted.calls) == 3 and scripted.calls[0]["messages"] == MESSAGES
    assert registrations() == before
    assert isinstance(dispatch("gpt-4o-mini"), OpenAICompatibleProvider)


def test_responses_per_model_pattern_and_repeat() -> None:
    with mock.responses({"gpt-*": ["g"], "claude-*": ["c1", "c2"]}, repeat=True):
        assert [ask(), ask(), ask("claude-x"), ask("claude-x"), ask("claude-x")] == [
            "g",
            "g",
            "c1",
            "c2",
            "c1",
        ]


def test_failure_then_the_real_provider() -> None:
    with ModelServer() as server:
        register_provider("gpt-*", OpenAICompatibleProvider(base_url=server.openai_url, api_key="k"))
        with mock.failure(kind="rate_limit", times=2) as failing:
            for _ in range(2):
                with pytest.raises(ProviderError) as info:
                    ask()
                assert info.value.status == 429
            assert ask()  # the third call reaches the server
            assert failing.failed == 2 and server.count("/v1/chat/completions") == 1
        with mock.failure(kind="timeout"), pytest.raises(ProviderError, match="timed out"):
            ask()
        with mock.failure(kind="malformed", model="gpt-4o*"), pytest.raises(ProviderError, match="malformed"):
            ask()
        with mock.failure(kind="server_error"), pytest.raises(ProviderError) as info:
            ask()
        assert info.value.status == 500
        assert server.count("/v1/chat/completions") == 1  # no mocked failure reached the server
    with pytest.raises(ValueError, match="choose one of"):
        mock.failure(kind="meteor")


def test_from_trace_serves_recorded_replies_without_the_server(tmp_path: Path) -> None:
    @monitor("classify", model="gpt-4o-mini")
    def classify(ticket: str) -> str:
        return ask(messages=[{"role": "system", "content": "Classify."}, {"role": "user", "content": ticket}])

    @monitor("draft", parent_agent="classify", model="gpt-4o-mini")
    def draft(category: str) -> str:
        return ask(messages=[{"role": "system", "content": "Draft."}, {"role": "user", "content": category}])

    with ModelServer() as server:
        register_provider("gpt-*", OpenAICompatibleProvider(base_url=server.openai_url, api_key="k"))
        with trace("svc", exporters=[FileExporter(str(tmp_path))]) as captured:
            recorded = draft(classify("broken parcel"))
        served = server.count()
    trace_file = tmp_path / f"{captured.trace_id}.json"
    assert trace_file.exists()
    reset_providers()  # the server is gone: only the mock can answer now
    with mock.from_trace(trace_file) as replaying:
        assert draft(classify("broken parcel")) == recorded
        with pytest.raises(ProviderError, match="were served"):
            ask()
    assert len(replaying.calls) == 3 and served == 2
    with pytest.raises(ProviderError, match="recorded no model replies"):
        with trace("empty", exporters=[]) as empty:
            pass
        mock.from_trace(empty)
