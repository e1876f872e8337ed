"""The published OpenAPI schema is the one in openapi.json: the same paths and methods,
operationIds, parameters, request bodies, responses with their statuses, and component
schemas. A changed URL, field or status fails here, so a client's contract never changes by
accident (issue 25 moved every endpoint with this file unchanged). A deliberate change
rewrites it: `MEMORYHUB_WRITE_OPENAPI=1 make test PYTEST_ARGS=tests/api/test_openapi.py`,
then review the diff."""

import json
import os
from pathlib import Path

import pytest
from django.test import Client

SNAPSHOT = Path(__file__).with_name("openapi.json")
BEFORE = json.loads(SNAPSHOT.read_text())


@pytest.fixture
def live(db) -> dict:
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    if os.environ.get("MEMORYHUB_WRITE_OPENAPI") == "1":
        SNAPSHOT.write_text(json.dumps(schema, indent=1, sort_keys=True) + "\n")
        pytest.fail(f"{SNAPSHOT.name} rewritten: review its diff, then run again without it")
    return schema


def _operations(schema: dict) -> dict[tuple[str, str], dict]:
    return {
        (path, method): operation
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    }


def test_every_url_and_method_is_still_served(live):
    assert sorted(_operations(live)) == sorted(_operations(BEFORE))


def test_every_operation_is_declared_as_before(live):
    before, now = _operations(BEFORE), _operations(live)
    changed = sorted(key for key in before if now.get(key) != before[key])

    assert changed == []
    assert len(before) == len(now)


def test_every_component_schema_is_as_before(live):
    before, now = BEFORE["components"], live["components"]
    changed = sorted(
        name
        for kind in before.keys() | now.keys()
        for name in before.get(kind, {}).keys() | now.get(kind, {}).keys()
        if before.get(kind, {}).get(name) != now.get(kind, {}).get(name)
    )

    assert changed == []


def test_the_whole_schema_is_as_before(live):
    # The three above say where a difference is; this one leaves none out (info, security).
    assert live == BEFORE
