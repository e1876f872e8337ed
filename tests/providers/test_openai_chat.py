"""OpenAIChat against a real loopback HTTP server."""

import time

import pytest

from apps.providers.llm.base import (
    ChatMessage,
    LLMBadResponse,
    LLMError,
    LLMResult,
    LLMTimeout,
    LLMUnavailable,
)
from apps.providers.llm.openai import OpenAIChat
from apps.providers.token_counts import count_tokens
from tests.support.llm_server import Completion, Delay, Drop, Raw, Status, unused_port_url

PROMPT = [
    ChatMessage(role="system", content="You are a memory consolidation agent."),
    ChatMessage(role="user", content="I moved to Berlin last month."),
]


def make(url, **overrides):
    options = {"url": url, "model": "gpt-test", "api_key": "sk-chat", "timeout": 5}
    return OpenAIChat(**{**options, **overrides})


def test_success_returns_text_and_token_usage(llm_server):
    # given
    llm_server.script(
        Completion("Noted: you live in Berlin.", prompt_tokens=31, completion_tokens=8)
    )

    # when
    result = make(llm_server.url).complete(PROMPT)

    # then
    assert isinstance(result, LLMResult)
    assert (result.text, result.model, result.input_tokens, result.output_tokens) == (
        "Noted: you live in Berlin.",
        "gpt-test",
        31,
        8,
    )
    assert (result.finish_reason, result.usage_estimated) == ("stop", False)
    assert 0 <= result.latency_ms < 2000


def test_request_carries_bearer_key_model_and_messages(llm_server):
    llm_server.script("{}")

    make(llm_server.url).complete(PROMPT, response_format_json=True)

    (request,) = llm_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-chat"
    assert request.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "You are a memory consolidation agent."},
            {"role": "user", "content": "I moved to Berlin last month."},
        ],
        "max_tokens": 1024,  # DEFAULT_MAX_TOKENS: every call is bounded (issue 23)
        "response_format": {"type": "json_object"},
    }


def test_temperature_and_max_tokens_are_sent_when_configured(llm_server):
    llm_server.script("ok")

    make(llm_server.url, temperature=0, max_tokens=200).complete(PROMPT)

    body = llm_server.requests[0].body
    assert (body["temperature"], body["max_tokens"]) == (0.0, 200)


def test_missing_usage_is_estimated_offline(llm_server):
    llm_server.script(Completion("Berlin it is.", prompt_tokens=None, completion_tokens=None))

    result = make(llm_server.url).complete(PROMPT)

    assert result.usage_estimated is True
    assert result.input_tokens == count_tokens(PROMPT[0].content) + count_tokens(PROMPT[1].content)
    assert result.output_tokens == 4  # berlin, it, is, .


def test_slow_answer_raises_llm_timeout(llm_server):
    llm_server.script(Delay(3, then="too late"))
    started = time.monotonic()

    with pytest.raises(LLMTimeout) as info:
        make(llm_server.url).complete(PROMPT, timeout=0.2)

    assert time.monotonic() - started < 2
    assert str(info.value) == f"no answer from {llm_server.url}/chat/completions within 0.2 s"


def test_http_503_raises_llm_unavailable(llm_server):
    llm_server.script(Status(503, "overloaded"))

    with pytest.raises(LLMUnavailable) as info:
        make(llm_server.url).complete(PROMPT)

    assert info.value.status == 503
    assert str(info.value) == f"HTTP 503 from {llm_server.url}/chat/completions: overloaded"


def test_http_429_raises_llm_unavailable(llm_server):
    llm_server.script(Status(429, "slow down"))

    with pytest.raises(LLMUnavailable):
        make(llm_server.url).complete(PROMPT)


def test_http_401_raises_plain_llm_error(llm_server):
    llm_server.script(Status(401, "bad key"))

    with pytest.raises(LLMError) as info:
        make(llm_server.url).complete(PROMPT)

    assert type(info.value) is LLMError
    assert info.value.status == 401


def test_closed_port_raises_llm_unavailable():
    with pytest.raises(LLMUnavailable, match="Connection refused"):
        make(unused_port_url()).complete(PROMPT)


def test_dropped_connection_raises_llm_unavailable(llm_server):
    llm_server.script(Drop())

    with pytest.raises(LLMUnavailable, match="RemoteDisconnected"):
        make(llm_server.url).complete(PROMPT)


def test_non_json_body_raises_llm_bad_response(llm_server):
    llm_server.script(Raw("<html>Bad Gateway</html>", content_type="text/html"))

    with pytest.raises(LLMBadResponse) as info:
        make(llm_server.url).complete(PROMPT)

    assert str(info.value) == (
        f"{llm_server.url}/chat/completions answered non-JSON: '<html>Bad Gateway</html>'"
    )


def test_missing_choices_raise_llm_bad_response(llm_server):
    llm_server.script(Raw('{"id": "x", "choices": []}'))

    with pytest.raises(LLMBadResponse, match="answered without choices"):
        make(llm_server.url).complete(PROMPT)


def test_error_object_with_status_200_raises_llm_bad_response(llm_server):
    llm_server.script(Raw('{"error": {"message": "context length exceeded"}}'))

    with pytest.raises(LLMBadResponse, match="context length exceeded"):
        make(llm_server.url).complete(PROMPT)


def test_unknown_role_is_refused_before_any_request(llm_server):
    with pytest.raises(ValueError, match="unknown chat role 'tool'"):
        make(llm_server.url).complete([ChatMessage(role="tool", content="x")])

    assert llm_server.requests == []


def test_wrong_path_is_a_404_and_leaves_the_script_alone(llm_server):
    llm_server.script("kept for later")

    with pytest.raises(LLMError) as info:
        make(llm_server.url + "/extra").complete(PROMPT)

    assert info.value.status == 404
    assert llm_server.pending == 1
    assert make(llm_server.url).complete(PROMPT).text == "kept for later"
