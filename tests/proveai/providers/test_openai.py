"""The OpenAI-compatible provider over real HTTP to the fake model server on 127.0.0.1."""

from __future__ import annotations

import pytest

from proveai.providers import OpenAICompatibleProvider, ProviderError
from tests.proveai.model_server import ModelServer, Reply, deterministic_answer
from tests.proveai.providers.messages_kit import MESSAGES


def test_openai_compatible_call_sends_the_request_and_reads_text_and_usage(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(api_key="sk-test-secret", base_url=model_server.openai_url)
    response = provider.call(MESSAGES, "gpt-4o-mini", temperature=0, seed=7)
    (request,) = model_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {"model": "gpt-4o-mini", "messages": MESSAGES, "temperature": 0, "seed": 7}
    assert request.headers["authorization"] == "Bearer sk-test-secret"
    assert response.text == deterministic_answer("gpt-4o-mini", MESSAGES, {"temperature": 0, "seed": 7})
    assert response.messages == ({"role": "assistant", "content": response.text},)
    assert response.usage["input_tokens"] > 0 and response.usage["output_tokens"] > 0
    assert response.raw["object"] == "chat.completion"


def test_a_local_endpoint_needs_no_key(model_server: ModelServer) -> None:
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    provider.call(MESSAGES, "llama-3")
    assert "authorization" not in model_server.requests[0].headers


@pytest.mark.parametrize(
    "body", ["not json at all", {"choices": []}, {"choices": [{"message": {"content": 5}}]}]
)
def test_malformed_replies_are_clean_errors(model_server: ModelServer, body) -> None:
    model_server.enqueue(Reply(status=200, body=body))
    provider = OpenAICompatibleProvider(base_url=model_server.openai_url)
    with pytest.raises(ProviderError, match=r"malformed|not a JSON object"):
        provider.call(MESSAGES, "m")
