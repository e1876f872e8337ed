"""Streamable HTTP at /mcp on the live server: bearer keys checked before any MCP, stateless
JSON answers (no SSE, no session id)."""

import json

import httpx2
import pytest

from apps.agents.models import ApiKey
from apps.mcp.views import NO_OAUTH

pytestmark = pytest.mark.django_db(transaction=True)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(url: str, body: dict, **headers: str) -> httpx2.Response:
    return httpx2.post(f"{url}/mcp", content=json.dumps(body), headers={**ACCEPT, **headers})


def refusal(reason: str) -> dict:
    """The 401's body: a JSON-RPC error the SDKs show (test_no_oauth.py has the rest)."""
    message = f"Unauthorized: {reason}. {NO_OAUTH}"
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


@pytest.mark.parametrize(
    ("authorization", "reason"),
    [
        (None, "an API key is required"),
        ("Bearer mh_nope_nope", "the API key is unknown, malformed or revoked"),
        ("Basic bWhfbm9wZQ==", "an API key is required"),
        ("Bearer", "an API key is required"),
        ("mh_nope_nope", "an API key is required"),
    ],
)
def test_a_missing_or_bad_key_is_refused_before_any_mcp(live_url, agent, authorization, reason):
    headers = {"Authorization": authorization} if authorization is not None else {}

    response = _post(live_url, INITIALIZE, **headers)

    assert response.status_code == 401
    assert response.headers["content-type"] == "application/json"
    assert response.json() == refusal(reason)


def test_a_revoked_key_is_refused(live_url, agent, key):
    ApiKey.objects.filter(agent=agent).update(revoked_at="2026-01-01T00:00:00Z")

    response = _post(live_url, INITIALIZE, Authorization=f"Bearer {key}")

    assert (response.status_code, response.json()) == (
        401,
        refusal("the API key is unknown, malformed or revoked"),
    )


def test_answers_are_stateless_json_without_a_session_id(live_url, key):
    response = _post(live_url, INITIALIZE, Authorization=f"Bearer {key}")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers
    body = response.json()
    assert (body["jsonrpc"], body["id"]) == ("2.0", 1)
    assert body["result"]["serverInfo"]["name"] == "memoryhub"
    listed = _post(
        live_url,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        Authorization=f"Bearer {key}",
        **{"MCP-Protocol-Version": "2025-06-18"},
    )
    assert listed.status_code == 200
    assert "memory_recall" in {t["name"] for t in listed.json()["result"]["tools"]}


def test_the_key_is_recorded_as_used(live_url, agent, key):
    assert ApiKey.objects.get(agent=agent).last_used_at is None

    _post(live_url, INITIALIZE, Authorization=f"Bearer {key}")

    assert ApiKey.objects.get(agent=agent).last_used_at is not None
