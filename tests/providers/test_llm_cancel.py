"""An abandoned call closes its connection, so the server sees the client go away (issue 23).

The loopback server's Generating item watches its connection the way a server that stops
generating on disconnect would; `.disconnected` is set when the client closes it.
"""

import threading

import pytest

from apps.lifecycle.services.llm import OK, TIMEOUT, ask
from apps.providers.llm import Cancellation, ChatMessage, LLMTimeout
from apps.providers.llm.openai import OpenAIChat
from tests.lifecycle.helpers import use_llm
from tests.support.llm_server import Completion, Generating

PROMPT = [ChatMessage(role="user", content="Consolidate this conversation.")]
SCHEMA = {"type": "object", "properties": {"history_entry": {"type": "string"}}}
# Far longer than any wait below: an event set before it ends was set by the client leaving.
GENERATION_SECONDS = 30


def test_cancel_shuts_the_connection_of_a_call_in_flight(llm_server):
    generating = Generating(GENERATION_SECONDS, then="too late")
    llm_server.script(generating)
    cancel = Cancellation()
    outcome: dict = {}

    def call() -> None:
        model = OpenAIChat(url=llm_server.url, model="m", timeout=GENERATION_SECONDS * 2)
        try:
            model.complete(PROMPT, cancel=cancel)
        except Exception as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    assert generating.entered.wait(5)

    cancel.cancel()

    assert generating.disconnected.wait(1.0)
    worker.join(1.0)
    assert not worker.is_alive()
    assert isinstance(outcome["error"], LLMTimeout)
    assert str(outcome["error"]) == f"request to {llm_server.url}/chat/completions cancelled"


def test_a_call_cancelled_before_it_starts_sends_nothing(llm_server):
    cancel = Cancellation()
    cancel.cancel()

    with pytest.raises(LLMTimeout, match="cancelled before it was sent"):
        OpenAIChat(url=llm_server.url, model="m").complete(PROMPT, cancel=cancel)

    assert llm_server.requests == []


def test_the_client_timeout_also_closes_the_connection(llm_server):
    generating = Generating(GENERATION_SECONDS, then="too late")
    llm_server.script(generating)

    with pytest.raises(LLMTimeout):
        OpenAIChat(url=llm_server.url, model="m").complete(PROMPT, timeout=0.2)

    assert generating.disconnected.wait(1.0)


def test_ask_cancels_the_call_it_stops_waiting_for(settings, llm_server):
    # The provider's socket timeout is ask's timeout plus a 5 s backstop: a disconnect
    # within a second of the wait giving up is the wait's doing.
    use_llm(settings, llm_server)
    generating = Generating(GENERATION_SECONDS, then="too late")
    llm_server.script(generating)

    answer = ask(PROMPT, timeout=0.3)

    assert (answer.status, answer.error) == (TIMEOUT, "no answer within 0.3 s")
    assert generating.disconnected.wait(1.0)


def test_ask_passes_schema_and_max_tokens_and_reports_mode_and_truncation(settings, llm_server):
    use_llm(settings, llm_server)
    llm_server.script(Completion('{"history_entry": "cut', finish_reason="length"))

    answer = ask(PROMPT, timeout=5, schema=SCHEMA, schema_name="consolidation", max_tokens=32)

    (request,) = llm_server.chats
    assert request.body["max_tokens"] == 32
    assert request.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "consolidation", "schema": SCHEMA, "strict": False},
    }
    assert (answer.status, answer.mode, answer.truncated) == (OK, "json_schema", True)


def test_ask_without_the_new_arguments_keeps_todays_request(settings, llm_server):
    use_llm(settings, llm_server)
    llm_server.script("prose")

    answer = ask(PROMPT, timeout=5)

    (request,) = llm_server.chats
    assert "response_format" not in request.body
    assert request.body["max_tokens"] == 1024
    assert (answer.status, answer.text, answer.mode, answer.truncated) == (
        OK,
        "prose",
        "prompt",
        False,
    )
