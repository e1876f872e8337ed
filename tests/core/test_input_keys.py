"""A key a request body does not declare is a 422 naming it, on every operation with a body
and at any depth, and nothing is written: a misspelt option (`limit` for `k`) is never
silently the default. A query string's unknown parameters are ignored, as on the web. MCP
tools answer the same detail."""

import json
import re

import pytest

from apps.conversations.models import Message
from apps.mcp.tools import TOOLS
from apps.mcp.tools.base import run
from memoryhub.api import api as agents_api
from tests.support.client import ok

pytestmark = pytest.mark.django_db

EXTRA = {"msg": "Extra inputs are not permitted", "type": "extra_forbidden"}
PATH_VALUES = {"session_id": "s", "fact_id": "1", "error_id": "1", "learning_id": "1", "name": "x"}


def _body_operations() -> list[tuple[str, str]]:
    """(method, path under /api/v1) of every operation of the API that reads a JSON body."""
    return sorted(
        (method, (prefix + path).replace("//", "/"))
        for prefix, router in agents_api._routers
        for path, path_view in router.path_operations.items()
        for operation in path_view.operations
        if any(m.__ninja_param_source__ == "body" for m in operation.models)
        for method in operation.methods
    )


def test_there_are_body_operations_to_check():
    assert len(_body_operations()) == 21


@pytest.mark.parametrize(("method", "path"), _body_operations())
def test_every_body_names_a_key_it_does_not_declare(api, method, path):
    url = "/api/v1" + re.sub(r"\{(?:\w+:)?(\w+)\}", lambda m: PATH_VALUES[m[1]], path)
    response = api.client.generic(
        method.upper(),
        url,
        json.dumps({"zz_unknown": 1}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {api.key}"},
    )

    detail = ok(response, 422)["detail"]
    assert {"loc": ["body", "payload", "zz_unknown"], **EXTRA} in detail


def test_a_misspelt_option_is_a_422_not_the_default(api, session):
    turns = [{"role": "user", "content": f"lunch at noon, day {day}"} for day in range(5)]
    ok(api.post(f"/sessions/{session.id}/messages", {"messages": turns}), 201)
    query = {"query": "lunch", "mode": "keyword"}

    misspelt = api.post("/search", {**query, "limit": 3})
    spelt = api.post("/search", {**query, "k": 3})

    assert ok(misspelt, 422) == {"detail": [{"loc": ["body", "payload", "limit"], **EXTRA}]}
    assert len(ok(spelt)["hits"]) == 3


def test_an_unknown_key_inside_a_message_writes_nothing(api, session):
    body = {
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "user", "contnet": "second"},
        ]
    }

    response = api.post(f"/sessions/{session.id}/messages", body)

    detail = ok(response, 422)["detail"]
    assert {"loc": ["body", "payload", "messages", 1, "contnet"], **EXTRA} in detail
    assert not Message.objects.exists()


def test_a_query_strings_unknown_parameters_are_ignored(api, session):
    plain = ok(api.get("/facts"))

    assert ok(api.get("/facts", {"_": "1700000000", "sort": "new"})) == plain
    assert ok(api.get(f"/sessions/{session.id}/messages", {"utm_source": "x"}))["items"] == []


def test_an_mcp_tool_names_an_argument_it_does_not_declare(agent):
    result = run(TOOLS["memory_search"], agent, {"query": "lunch", "limit": 3})

    assert result.is_error
    assert json.loads(result.content[0].text) == [{"loc": ["limit"], **EXTRA}]
