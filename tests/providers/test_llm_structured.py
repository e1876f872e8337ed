"""Structured output negotiated with a real loopback server, and bounded calls (issue 23)."""

import json
import logging

import pytest

from apps.providers.llm.base import ChatMessage, LLMError, LLMUnavailable
from apps.providers.llm.budget import (
    MESSAGE_OVERHEAD_TOKENS,
    background_timeout,
    context_tokens,
    messages_tokens,
    prompt_budget,
    prompt_fits,
)
from apps.providers.llm.openai import OpenAIChat
from apps.providers.token_counts import count_tokens
from tests.support.llm_server import Completion, Raw, Status

PROMPT = [
    ChatMessage(role="system", content="Summarise the conversation as JSON."),
    ChatMessage(role="user", content="I moved to Berlin last month."),
]
SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
}
ANSWER = '{"summary": "The user moved to Berlin."}'

JSON_SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "summary", "schema": SCHEMA, "strict": False},
}
JSON_OBJECT_SCHEMA_FORMAT = {"type": "json_object", "schema": SCHEMA}
JSON_OBJECT_FORMAT = {"type": "json_object"}


def make(url, **overrides):
    options = {"url": url, "model": "local-test", "timeout": 5}
    return OpenAIChat(**{**options, **overrides})


def formats(server) -> list:
    """The response_format of each chat request, None where there was none."""
    return [r.body.get("response_format") for r in server.chats]


# --- negotiation in auto mode ------------------------------------------------------------


def test_auto_mode_asks_for_json_schema_first(llm_server):
    llm_server.script(ANSWER)

    result = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")

    assert formats(llm_server) == [JSON_SCHEMA_FORMAT]
    assert (result.text, result.structured_mode, result.rejected_modes) == (
        ANSWER,
        "json_schema",
        (),
    )


def test_a_rejected_json_schema_is_retried_with_json_object_and_schema(llm_server, caplog):
    llm_server.reject_formats("json_schema")
    llm_server.script(ANSWER)

    with caplog.at_level(logging.WARNING, logger="apps.providers.llm.openai"):
        result = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")

    assert formats(llm_server) == [JSON_SCHEMA_FORMAT, JSON_OBJECT_SCHEMA_FORMAT]
    assert (result.text, result.structured_mode, result.rejected_modes) == (
        ANSWER,
        "json_object_schema",
        ("json_schema",),
    )
    assert [r.getMessage() for r in caplog.records] == [
        f"local-test at {llm_server.url} rejected response_format json_schema (HTTP 400); "
        "using json_object_schema from now on"
    ]


def test_the_next_call_starts_at_the_remembered_mode(llm_server):
    llm_server.reject_formats("json_schema")
    llm_server.script(ANSWER, ANSWER)
    make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")

    # a new instance (as after a settings change) shares what this process learned
    second = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")

    assert formats(llm_server) == [
        JSON_SCHEMA_FORMAT,
        JSON_OBJECT_SCHEMA_FORMAT,
        JSON_OBJECT_SCHEMA_FORMAT,
    ]
    assert (second.structured_mode, second.rejected_modes) == ("json_object_schema", ())


def test_what_is_learned_is_per_model(llm_server):
    llm_server.reject_formats("json_schema")
    llm_server.script(ANSWER)
    make(llm_server.url).complete(PROMPT, schema=SCHEMA)
    llm_server.reject_formats()
    llm_server.script(ANSWER)

    other = make(llm_server.url, model="another-model").complete(PROMPT, schema=SCHEMA)

    assert other.structured_mode == "json_schema"
    assert [r.body["model"] for r in llm_server.chats] == [
        "local-test",
        "local-test",
        "another-model",
    ]


def test_a_server_rejecting_every_response_format_ends_at_the_prompt_alone(llm_server):
    llm_server.reject_formats("json_schema", "json_object_schema", "json_object")
    llm_server.script(ANSWER, ANSWER)

    result = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")
    again = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")

    assert formats(llm_server) == [
        JSON_SCHEMA_FORMAT,
        JSON_OBJECT_SCHEMA_FORMAT,
        JSON_OBJECT_FORMAT,
        None,
        None,
    ]
    assert (result.text, result.structured_mode, result.rejected_modes) == (
        ANSWER,
        "prompt",
        ("json_schema", "json_object_schema", "json_object"),
    )
    assert (again.structured_mode, again.rejected_modes) == ("prompt", ())
    assert llm_server.pending == 0


def test_a_422_naming_response_format_is_a_rejection_too(llm_server):
    # llama-cpp-python's server validates the request with pydantic: 422, the field named
    detail = {"detail": [{"loc": ["body", "response_format", "type"], "msg": "Input should be"}]}
    llm_server.script(Raw(json.dumps(detail), status=422), ANSWER)

    result = make(llm_server.url).complete(PROMPT, schema=SCHEMA)

    assert formats(llm_server)[1] == JSON_OBJECT_SCHEMA_FORMAT
    assert result.structured_mode == "json_object_schema"


# What llama-cpp-python 0.3.36's server answers to a json_schema response_format (measured).
LLAMA_CPP_PYTHON_500 = json.dumps(
    {
        "error": {
            "message": "1 validation error: {'type': 'literal_error', "
            "'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
            "type": "internal_server_error",
        }
    }
)


def test_a_500_naming_response_format_is_a_rejection_and_is_remembered(llm_server):
    llm_server.script(Raw(LLAMA_CPP_PYTHON_500, status=500), ANSWER, ANSWER)

    first = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")
    second = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")

    assert formats(llm_server) == [
        JSON_SCHEMA_FORMAT,
        JSON_OBJECT_SCHEMA_FORMAT,
        JSON_OBJECT_SCHEMA_FORMAT,
    ]
    assert (first.structured_mode, first.rejected_modes) == ("json_object_schema", ("json_schema",))
    assert (second.structured_mode, second.rejected_modes) == ("json_object_schema", ())


def test_a_plain_500_is_unavailable_and_not_a_rejection(llm_server):
    llm_server.script(Raw('{"error": {"message": "out of memory"}}', status=500), ANSWER)

    with pytest.raises(LLMUnavailable) as info:
        make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")
    result = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")

    assert info.value.status == 500
    assert formats(llm_server) == [JSON_SCHEMA_FORMAT, JSON_SCHEMA_FORMAT]
    assert result.structured_mode == "json_schema"


def test_a_500_naming_response_format_on_a_prompt_only_request_is_not_retried(llm_server):
    llm_server.script(Raw(LLAMA_CPP_PYTHON_500, status=500), "never sent")

    with pytest.raises(LLMUnavailable):
        make(llm_server.url).complete(PROMPT)

    assert formats(llm_server) == [None]
    assert llm_server.pending == 1


def test_json_without_a_schema_starts_at_json_object(llm_server):
    llm_server.script("{}")

    result = make(llm_server.url).complete(PROMPT, response_format_json=True)

    assert formats(llm_server) == [JSON_OBJECT_FORMAT]
    assert result.structured_mode == "json_object"


def test_a_prose_call_sends_no_response_format(llm_server):
    llm_server.script("Berlin.")

    result = make(llm_server.url, structured="json_schema").complete(PROMPT)

    assert formats(llm_server) == [None]
    assert result.structured_mode == "prompt"


# --- errors that are not a rejection of response_format ----------------------------------


def test_a_400_on_a_prompt_only_request_is_not_retried(llm_server):
    llm_server.script(Status(400, "response_format unsupported"), "never sent")

    with pytest.raises(LLMError) as info:
        make(llm_server.url).complete(PROMPT)

    assert info.value.status == 400
    assert formats(llm_server) == [None]
    assert llm_server.pending == 1


def test_a_400_that_does_not_name_response_format_is_not_retried_nor_learned(llm_server):
    # e.g. a prompt over the context: the server keeps its structured output
    llm_server.script(Status(400, "the request exceeds the available context size"), ANSWER)

    with pytest.raises(LLMError) as info:
        make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")
    result = make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="summary")

    assert info.value.status == 400
    assert formats(llm_server) == [JSON_SCHEMA_FORMAT, JSON_SCHEMA_FORMAT]
    assert result.structured_mode == "json_schema"


# --- pinned modes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pinned", "sent"),
    [
        ("json_schema", JSON_SCHEMA_FORMAT),
        ("json_object_schema", JSON_OBJECT_SCHEMA_FORMAT),
        ("json_object", JSON_OBJECT_FORMAT),
        ("prompt", None),
    ],
)
def test_a_pinned_mode_sends_exactly_its_form(llm_server, pinned, sent):
    llm_server.script(ANSWER)

    result = make(llm_server.url, structured=pinned).complete(
        PROMPT, schema=SCHEMA, schema_name="summary"
    )

    assert formats(llm_server) == [sent]
    assert result.structured_mode == pinned


def test_a_pinned_mode_is_not_negotiated_down(llm_server):
    llm_server.reject_formats("json_schema")
    llm_server.script("never sent")

    with pytest.raises(LLMError) as info:
        make(llm_server.url, structured="json_schema").complete(PROMPT, schema=SCHEMA)

    assert info.value.status == 400
    assert len(llm_server.chats) == 1
    assert llm_server.pending == 1


def test_an_unknown_mode_is_refused_at_construction():
    with pytest.raises(ValueError, match="STRUCTURED must be one of"):
        OpenAIChat(url="http://127.0.0.1:9/v1", model="m", structured="grammar")


def test_a_schema_name_outside_openais_rule_is_refused_before_any_request(llm_server):
    with pytest.raises(ValueError, match="schema_name must match"):
        make(llm_server.url).complete(PROMPT, schema=SCHEMA, schema_name="my answer")

    assert llm_server.requests == []


def test_the_setting_reaches_the_provider_through_its_config(settings, llm_server):
    from apps.providers.llm import get_chat_model

    settings.MEMORYHUB_PROVIDERS = {
        "llm": {
            "CLASS": "apps.providers.llm.openai.OpenAIChat",
            "CONFIG": {"URL": llm_server.url, "MODEL": "m", "STRUCTURED": "json_object"},
        }
    }
    llm_server.script(ANSWER)

    result = get_chat_model().complete(PROMPT, schema=SCHEMA)

    assert formats(llm_server) == [JSON_OBJECT_FORMAT]
    assert result.structured_mode == "json_object"


# --- bounded calls -----------------------------------------------------------------------


def test_every_call_sends_max_tokens(llm_server):
    llm_server.script("a", "b", "c", "d")
    default, configured = make(llm_server.url), make(llm_server.url, max_tokens=300)

    default.complete(PROMPT)
    configured.complete(PROMPT)
    configured.complete(PROMPT, max_tokens=64)
    default.complete(PROMPT, schema=SCHEMA, max_tokens=128)

    assert [r.body["max_tokens"] for r in llm_server.chats] == [1024, 300, 64, 128]


@pytest.mark.parametrize("bad", [0, -5, 2.5, True])
def test_a_max_tokens_that_is_not_a_positive_integer_is_refused(llm_server, bad):
    with pytest.raises(ValueError, match="max_tokens must be a positive integer"):
        make(llm_server.url).complete(PROMPT, max_tokens=bad)

    assert llm_server.requests == []


def test_finish_reason_length_marks_the_answer_truncated(llm_server):
    llm_server.script(
        Completion('{"summary": "The user mo', finish_reason="length"), Completion(ANSWER)
    )
    model = make(llm_server.url)

    cut = model.complete(PROMPT, schema=SCHEMA, max_tokens=8)
    whole = model.complete(PROMPT, schema=SCHEMA, max_tokens=8)

    assert (cut.text, cut.finish_reason, cut.truncated) == (
        '{"summary": "The user mo',
        "length",
        True,
    )
    assert (whole.finish_reason, whole.truncated) == ("stop", False)


# --- budget helpers ----------------------------------------------------------------------


def test_the_bounds_come_from_the_settings(settings):
    settings.MEMORYHUB_LLM_CONTEXT_TOKENS = 4096
    settings.MEMORYHUB_LLM_BACKGROUND_TIMEOUT = 120.0

    assert (context_tokens(), background_timeout()) == (4096, 120.0)
    # 4096 - 512 of output - a margin of 409 (10 % of the window)
    assert prompt_budget(512) == 3175


def test_the_defaults_fit_an_8k_model():
    assert (context_tokens(), background_timeout()) == (8192, 600.0)
    assert prompt_budget(1024, window=8192) == 8192 - 1024 - 819


def test_a_small_window_keeps_a_minimum_margin_and_never_goes_negative():
    assert prompt_budget(100, window=512) == 512 - 100 - 64
    assert prompt_budget(2048, window=512) == 0


def test_messages_tokens_counts_contents_and_template_overhead():
    expected = sum(count_tokens(m.content) for m in PROMPT) + 2 * MESSAGE_OVERHEAD_TOKENS

    assert messages_tokens(PROMPT) == expected
    assert prompt_fits(PROMPT, 100, window=expected + 100 + 64) is True
    assert prompt_fits(PROMPT, 100, window=expected + 100 + 63) is False
