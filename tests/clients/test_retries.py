"""Retries against real HTTP servers: a loopback server that answers 429 with Retry-After,
503, or closes the connection, and the same server as a proxy in front of the live server, so
a retried append is seen to store each message once."""

import pytest
from memoryhub_client import Entry, RateLimited, SearchResult, Session, Unavailable

from tests.clients.conftest import collect, settle
from tests.clients.loopback import Answer, Delay, Drop, Forward, ForwardThenDrop

SESSION = {
    "user": None,
    "id": "7eb4d3b4-972c-4106-8d04-b7e6ab503327",
    "key": "chat-1",
    "title": "",
    "metadata": {},
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
}
ENTRY = {
    "id": 1,
    "name": "notes/todo",
    "aliases": [],
    "kind": "note",
    "content": "buy milk",
    "bytes": 8,
    "needs_compression": False,
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
}
SEARCH = {"query": "milk", "mode": "semantic", "hits": [], "windows": []}
UNAVAILABLE = {"detail": "the database is unavailable; retry later"}
FAST = {"backoff": 0.01}

# Idempotent calls (and a search, a read sent as POST): how to make each, the good answer it
# ends on, the request it sends, and what that answer reads as.
IDEMPOTENT = {
    "GET": (
        lambda hub: hub.sessions.get("chat-1"),
        Answer(200, SESSION),
        "GET /api/v1/sessions/chat-1",
        Session.model_validate(SESSION),
    ),
    "PUT": (
        lambda hub: hub.entries.write("notes/todo", "buy milk"),
        Answer(200, ENTRY),
        "PUT /api/v1/entries/notes/todo",
        Entry.model_validate(ENTRY),
    ),
    "DELETE": (
        lambda hub: hub.sessions.delete("chat-1"),
        Answer(204),
        "DELETE /api/v1/sessions/chat-1",
        None,
    ),
    "search": (
        lambda hub: hub.search("milk"),
        Answer(200, SEARCH),
        "POST /api/v1/search",
        SearchResult.model_validate(SEARCH),
    ),
}


def sent(loopback) -> list[str]:
    return [f"{r.method} {r.path}" for r in loopback.requests]


@pytest.mark.parametrize("failure", ["429", "503", "dropped"])
@pytest.mark.parametrize("name", IDEMPOTENT)
def test_an_idempotent_call_is_retried_until_it_succeeds(run, loopback, name, failure):
    make_call, answer, request, expected = IDEMPOTENT[name]
    first = {
        "429": Answer(429, {"detail": "slow down"}, {"Retry-After": "0"}),
        "503": Answer(503, UNAVAILABLE),
        "dropped": Drop(),
    }[failure]
    loopback.script(first, first, answer)

    async def scenario(hub):
        return await settle(make_call(hub))

    result = run(scenario, url=loopback.url, **FAST)

    assert sent(loopback) == [request] * 3
    assert result == expected


def test_retry_after_is_waited_out(run, loopback):
    loopback.script(
        Answer(429, {"detail": "slow down"}, {"Retry-After": "1"}), Answer(200, SESSION)
    )

    async def scenario(hub):
        return await settle(hub.sessions.get("chat-1"))

    session = run(scenario, url=loopback.url, **FAST)

    assert session.key == "chat-1"
    first, second = loopback.requests
    assert second.at - first.at >= 1.0  # the server's Retry-After, not the 10 ms backoff


def test_retries_stop_after_max_retries_with_the_last_error(run, loopback):
    loopback.script(*[Answer(503, UNAVAILABLE, {"Retry-After": "0"})] * 3)

    async def scenario(hub):
        with pytest.raises(Unavailable) as caught:
            await settle(hub.sessions.get("chat-1"))
        return caught.value

    error = run(scenario, url=loopback.url, max_retries=2, **FAST)

    assert sent(loopback) == ["GET /api/v1/sessions/chat-1"] * 3
    assert (error.status, error.detail, error.retry_after) == (503, UNAVAILABLE["detail"], 0.0)


def test_a_retry_after_longer_than_max_wait_is_raised_at_once(run, loopback):
    loopback.script(Answer(429, {"detail": "slow down"}, {"Retry-After": "30"}))

    async def scenario(hub):
        with pytest.raises(RateLimited) as caught:
            await settle(hub.sessions.get("chat-1"))
        return caught.value

    error = run(scenario, url=loopback.url, max_wait=5, **FAST)

    assert sent(loopback) == ["GET /api/v1/sessions/chat-1"]
    assert (error.status, error.detail, error.retry_after) == (429, "slow down", 30.0)


def test_a_timeout_is_unavailable(run, loopback):
    loopback.script(Delay(5, Answer(200, SESSION)))

    async def scenario(hub):
        with pytest.raises(Unavailable) as caught:
            await settle(hub.sessions.get("chat-1"))
        return caught.value

    error = run(scenario, url=loopback.url, timeout=0.2, max_retries=0)

    assert error.status is None
    assert error.message.startswith("timed out: ReadTimeout")


@pytest.mark.parametrize(
    ("failure", "error_type", "status"),
    [
        (Answer(503, UNAVAILABLE), Unavailable, 503),
        (Answer(429, {"detail": "slow down"}, {"Retry-After": "0"}), RateLimited, 429),
        (Drop(), Unavailable, None),
    ],
)
def test_a_call_that_is_not_idempotent_is_never_retried(run, loopback, failure, error_type, status):
    loopback.script(failure, Answer(201, ENTRY))

    async def scenario(hub):
        with pytest.raises(error_type) as caught:
            await settle(hub.entries.add("notes/todo", "buy milk"))
        return caught.value

    error = run(scenario, url=loopback.url, **FAST)

    assert sent(loopback) == ["POST /api/v1/entries"]  # once: the 201 was never asked for
    assert error.status == status


def test_a_lost_append_is_retried_and_stores_each_message_once(run, loopback, live_url):
    # The proxy hands the first append to the live server, which stores it, then closes the
    # connection without an answer; the client retries with the same idempotency keys.
    loopback.upstream = live_url
    loopback.script(Forward(), ForwardThenDrop(), Forward(), Forward())
    messages = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi!"}]

    async def scenario(hub):
        await settle(hub.sessions.create(key="chat-1"))
        appended = await settle(hub.messages.append("chat-1", messages))
        return appended, await collect(hub.messages.list("chat-1"))

    appended, stored = run(scenario, url=loopback.url, **FAST)

    assert sent(loopback) == [
        "POST /api/v1/sessions",
        "POST /api/v1/sessions/chat-1/messages",
        "POST /api/v1/sessions/chat-1/messages",
        "GET /api/v1/sessions/chat-1/messages",
    ]
    lost, retried = loopback.requests[1].body, loopback.requests[2].body
    assert lost == retried
    assert [m["content"] for m in retried["messages"]] == ["hello", "hi!"]
    assert all(len(m["idempotency_key"]) == 32 for m in retried["messages"])
    assert (appended.created, appended.deduplicated) == (0, 2)
    assert [m.content for m in stored] == ["hello", "hi!"]
