"""An append to a session key the agent has not used yet does the same in the API and in
MCP's append_messages (issue 41): both start that session, as POST /sessions with the key
would (a user-bound key's session is its user's); an unknown session id stays "session not
found" in both."""

import pytest
from django.test import Client

from apps.agents.services import api_key_issue
from tests.mcp.test_server_unit import call
from tests.support.client import ApiClient

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "user", "content": "hello there"}]
UNKNOWN_ID = "00000000-0000-0000-0000-000000000000"


def append(side: str, key: str, ref: str) -> tuple[bool, object]:
    """(succeeded, body or error detail) of one append through the API or MCP."""
    if side == "api":
        response = ApiClient(key=key, client=Client()).post(
            f"/sessions/{ref}/messages", {"messages": MESSAGES}
        )
        ok = response.status_code == 201
        return ok, response.json() if ok else (response.status_code, response.json()["detail"])
    result = call(key, "append_messages", {"session_id": ref, "messages": MESSAGES})
    if result["isError"]:
        return False, (404, result["content"][0]["text"])
    return True, result["structuredContent"]


@pytest.mark.parametrize("side", ["api", "mcp"])
def test_an_append_to_a_new_key_starts_that_session(side, key, api):
    ok, body = append(side, key, "chat-9")

    assert ok is True
    session = api.get("/sessions/chat-9").json()
    assert (session["key"], session["user"], session["title"]) == ("chat-9", None, "")
    assert body["created"] == 1
    assert [m["session_id"] for m in body["messages"]] == [session["id"]]
    # The second append goes to the same session.
    assert append(side, key, "chat-9")[0] is True
    assert api.get("/sessions").json()["items"] == [api.get("/sessions/chat-9").json()]
    assert len(api.get("/sessions/chat-9/messages").json()["items"]) == 2


@pytest.mark.parametrize("side", ["api", "mcp"])
def test_a_user_bound_keys_new_session_is_its_users(side, agent, api):
    bound = api_key_issue(agent=agent, name="ana-app", user="telegram:42").raw

    assert append(side, bound, "ana-chat")[0] is True

    assert api.get("/sessions/ana-chat").json()["user"] == "telegram:42"


@pytest.mark.parametrize("side", ["api", "mcp"])
def test_an_unknown_session_id_is_not_found_on_both_sides(side, key, api):
    assert append(side, key, UNKNOWN_ID) == (False, (404, "session not found"))
    assert api.get("/sessions").json()["items"] == []
