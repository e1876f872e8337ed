"""Each exception the client raises, provoked from the real server (and from the client's own
request models, before anything is sent), with the API's detail and the field at fault."""

import pytest
from memoryhub_client import (
    Conflict,
    Forbidden,
    InvalidInput,
    MemoryHubError,
    NotFound,
    RateLimited,
    Unauthorized,
)

from tests.clients.conftest import collect, settle
from tests.clients.loopback import Answer, Raw


def raised(run, make_call, **options) -> MemoryHubError:
    """The MemoryHubError the call `make_call(hub)` raises on this test's hub."""

    async def scenario(hub):
        with pytest.raises(MemoryHubError) as caught:
            await settle(make_call(hub))
        return caught.value

    return run(scenario, **options)


def test_an_unknown_session_is_not_found(run):
    error = raised(run, lambda hub: hub.sessions.get("no-such-session"))

    assert type(error) is NotFound
    assert (error.status, error.detail, error.field) == (404, "session not found", None)
    assert str(error) == "404 session not found"


def test_a_refused_value_is_invalid_input_naming_its_field(run):
    error = raised(run, lambda hub: hub.sessions.create(key="not a valid key!"))

    assert type(error) is InvalidInput
    assert error.status == 422
    assert (error.field, error.loc) == ("key", ["body", "payload", "key"])
    assert error.detail == [
        {
            "loc": ["body", "payload", "key"],
            "msg": "String should match pattern '^[A-Za-z0-9._:@\\-]+$'",
            "type": "string_pattern_mismatch",
        }
    ]


def test_a_query_parameter_out_of_range_is_invalid_input(run):
    error = raised(run, lambda hub: collect(hub.sessions.list(limit=0)))

    assert (type(error), error.status, error.field) == (InvalidInput, 422, "limit")


def test_a_value_the_server_refuses_past_its_schema_is_invalid_input(run):
    error = raised(run, lambda hub: hub.memory.recall("   "))

    assert (type(error), error.status, error.field) == (InvalidInput, 422, "query")
    assert (error.loc, error.message) == (["body", "query"], "query: query must not be empty")


def test_an_unreadable_path_parameter_is_a_400(run):
    error = raised(run, lambda hub: hub.sessions.get("bad\x00key"))

    assert (type(error), error.status, error.loc) == (InvalidInput, 400, ["path", "session_id"])
    assert error.field == "session_id"


def test_a_value_the_client_refuses_is_invalid_input_before_sending(run):
    error = raised(
        run,
        lambda hub: hub.messages.append(
            "chat-1", [{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]
        ),
    )

    assert (type(error), error.status, error.field) == (InvalidInput, None, "messages.1.role")
    assert error.message == (
        "messages.1.role: Input should be 'user', 'assistant', 'tool' or 'system'"
    )


def test_a_taken_name_is_a_conflict(run):
    async def scenario(hub):
        await settle(hub.entries.add("notes/todo", "buy milk"))
        with pytest.raises(Conflict) as caught:
            await settle(hub.entries.add("notes/todo", "again"))
        return caught.value

    error = run(scenario)

    assert (error.status, error.field) == (409, "name")
    assert error.detail == "the name 'notes/todo' is taken by an entry"


def test_a_wrong_key_is_unauthorized(run):
    error = raised(run, lambda hub: hub.agent.get(), key="mh_not-a-real-key")

    assert type(error) is Unauthorized
    assert (error.status, error.detail) == (401, "missing, malformed or revoked API key")


def test_no_key_is_unauthorized(run):
    error = raised(run, lambda hub: hub.agent.get(), key=None)

    assert (type(error), error.status) == (Unauthorized, 401)


def test_a_key_over_its_rate_is_rate_limited_with_retry_after(run, settings):
    settings.MEMORYHUB_KEY_RATE_PER_MINUTE = 2

    async def scenario(hub):
        await settle(hub.agent.get())
        await settle(hub.agent.get())
        with pytest.raises(RateLimited) as caught:
            await settle(hub.agent.get())
        return caught.value

    # An idempotent call is retried on 429, but never past max_wait: the server asks for up
    # to a minute, so the error comes back at once with the wait it asked for.
    error = run(scenario, max_wait=0.5)

    assert error.status == 429
    assert 1 <= error.retry_after <= 60
    assert error.detail == (
        f"this API key is over its 2 requests per minute; retry in {int(error.retry_after)} s"
    )


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(403, Forbidden), (413, InvalidInput), (414, InvalidInput), (500, MemoryHubError)],
)
def test_the_statuses_the_api_gives_rarely_map_to_their_exception(
    run, loopback, status, error_type
):
    # A loopback server: the live API answers 403 to no agent call, and 500 only on a defect.
    loopback.script(Answer(status, {"detail": "refused", "loc": ["body", "content"]}))
    error = raised(run, lambda hub: hub.entries.add("notes/todo", "x" * 10), url=loopback.url)

    assert type(error) is error_type
    assert (error.status, error.detail, error.field) == (status, "refused", "content")


def test_an_answer_that_is_not_the_apis_json_keeps_its_status_and_a_start(run, loopback):
    loopback.script(Raw(502, b"<html><body>Bad gateway</body></html>"))
    error = raised(run, lambda hub: hub.entries.add("notes/todo", "x"), url=loopback.url)

    assert (type(error), error.status) == (MemoryHubError, 502)
    assert error.detail == "Bad Gateway: <html><body>Bad gateway</body></html>"
