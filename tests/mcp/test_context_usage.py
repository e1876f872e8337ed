"""The MCP get_context tool takes the agent's observed_tokens as /context does (seed 001's
context manager on the model's own prompt count)."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_get_context_passes_observed_tokens_through(mcp, api):
    api.post("/sessions", {"key": "s1"})
    api.post("/sessions/s1/messages", {"messages": [{"role": "user", "content": "hello there"}]})
    body = {"session_id": "s1", "lifecycle": "off", "observed_tokens": 83_200}  # 65% of 128k

    usage = mcp.result("get_context", body)["usage"]

    assert usage == api.post("/context", body).json()["usage"]
    assert (usage["measured_by"], usage["usage_tokens"], usage["usage_ratio"]) == (
        "observed",
        83_200,
        0.65,
    )
    assert (usage["action"], usage["action_status"]) == ("flush", "off")


def test_a_negative_observed_tokens_is_a_tool_error(mcp, api):
    api.post("/sessions", {"key": "s1"})
    body = {"session_id": "s1", "observed_tokens": -1}

    detail = mcp.error("get_context", body)

    by_api = api.post("/context", body).json()["detail"]
    assert detail == [{**d, "loc": d["loc"][2:]} for d in by_api]
    assert [d["loc"] for d in detail] == [["observed_tokens"]]
