"""mock/_registry.py: MockProvider, the base of every mock, against the real dispatch
registry. A mock answers the models its patterns match, in front of every other registration,
records each call (and on the open span, as a real provider does), and on stop puts the
registry back exactly as it found it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest

from proveai import dispatch, monitor, trace
from proveai.mock import MockProvider
from proveai.providers import ProviderError, registrations
from proveai.providers.base import Message
from proveai.providers.openai import OpenAICompatibleProvider
from proveai.providers.registry import dispatch as lookup
from proveai.providers.registry import register_provider

MESSAGES = [{"role": "user", "content": "hello"}]


class Echo(MockProvider):
    """Replies with the model's name and the last message; refuses a model named `broken`."""

    def respond(self, messages: Sequence[Message], model: str, kwargs: dict[str, Any]) -> str:
        if model == "broken":
            raise ProviderError("the echo is broken")
        return f"{model}: {messages[-1]['content']}"


def test_the_base_needs_a_respond() -> None:
    with pytest.raises(TypeError, match="respond"):
        MockProvider(["*"])  # type: ignore[abstract]


def test_a_mock_answers_its_patterns_in_front_of_the_others_while_installed() -> None:
    other = OpenAICompatibleProvider(base_url="http://127.0.0.1:9", api_key="k")
    register_provider("*", other)
    before = registrations()
    real = lookup("gpt-4o-mini")
    with Echo(["gpt-*", "claude-*"]) as echo:
        assert lookup("gpt-4o-mini") is echo and lookup("claude-x") is echo
        assert lookup("gemini-pro") is other  # not its pattern: the next registration answers
        assert [r.pattern for r in registrations()[:2]] == ["gpt-*", "claude-*"]  # first pattern first
        assert dispatch("gpt-4o").call(MESSAGES, "gpt-4o", temperature=0).text == "gpt-4o: hello"
    assert registrations() == before and lookup("gpt-4o-mini") is real is other
    assert echo.supports("gpt-4o") and not echo.supports("GPT-4o")  # glob patterns, case as given
    assert echo.calls == [{"messages": MESSAGES, "model": "gpt-4o", "kwargs": {"temperature": 0}}]


def test_each_mock_has_its_own_provider_id() -> None:
    first, second = Echo(["*"]), Echo(["*"])
    assert first.provider_id.startswith("proveai-mock:Echo:")
    assert first.provider_id != second.provider_id  # the response cache never mixes their replies


def test_a_call_is_recorded_on_the_open_span_like_a_real_providers() -> None:
    @monitor("drafter", model="gpt-4o-mini")
    def drafter() -> str:
        return dispatch("gpt-4o-mini").call(MESSAGES, "gpt-4o-mini").text

    with Echo(["gpt-*"]), trace("pipeline", exporters=[]) as t:
        assert drafter() == "gpt-4o-mini: hello"
    (span,) = t.spans
    assert span.input_messages == MESSAGES
    assert span.output_messages == [{"role": "assistant", "content": "gpt-4o-mini: hello"}]
    with Echo(["*"]) as echo, pytest.raises(ProviderError, match="the echo is broken"):
        echo.call(MESSAGES, "broken")
    assert len(echo.calls) == 1  # a refused call is still a call the code under test made


def test_stop_restores_what_it_found_even_after_registrations_made_meanwhile() -> None:
    register_provider("mine-*", OpenAICompatibleProvider(base_url="http://127.0.0.1:9", api_key="k"))
    found = registrations()
    echo = Echo(["*"]).start()
    register_provider("later-*", OpenAICompatibleProvider(base_url="http://127.0.0.1:9", api_key="k"))
    echo.stop()
    assert registrations() == found
    echo.stop()  # a second stop, or a stop before any start, changes nothing
    Echo(["*"]).stop()
    assert registrations() == found


def test_nested_mocks_restore_in_order() -> None:
    before = registrations()
    outer = Echo(["*"]).start()
    with Echo(["gpt-*"]) as inner:
        assert lookup("gpt-4o") is inner and lookup("claude-x") is outer
    assert lookup("gpt-4o") is outer
    outer.stop()
    assert registrations() == before


def test_calls_from_many_threads_are_all_recorded() -> None:
    with Echo(["*"]) as echo:

        def work(n: int) -> None:
            for i in range(50):
                echo.call([{"role": "user", "content": f"{n}-{i}"}], "m")

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    contents = sorted(call["messages"][0]["content"] for call in echo.calls)
    assert contents == sorted(f"{n}-{i}" for n in range(8) for i in range(50))
