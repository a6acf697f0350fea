"""A provider call inside a monitored agent records its request on the open span."""

from __future__ import annotations

from proveai.providers import OpenAICompatibleProvider
from tests.proveai.model_server import ModelServer


def test_a_monitored_agent_records_the_request_it_sent(model_server: ModelServer) -> None:
    from proveai import monitor, trace

    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)

    @monitor("classify", model="gpt-4o-mini")
    def classify(ticket: str) -> str:
        system = "Classify the ticket into one word."
        messages = [{"role": "system", "content": system}, {"role": "user", "content": ticket}]
        return provider.call(messages, "gpt-4o-mini", temperature=0).text

    with trace("svc") as t:
        out = classify("My order arrived broken")
    (span,) = t.spans
    assert span.prompt == "Classify the ticket into one word."
    assert span.input_messages[1] == {"role": "user", "content": "My order arrived broken"}
    assert span.output_messages == [{"role": "assistant", "content": out}]
    assert span.usage["output_tokens"] > 0
    assert span.request["temperature"] == 0
