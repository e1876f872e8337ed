"""The published OpenAPI schema: one component per name, every reference resolves, and the
error responses the API gives are declared with the body they really have."""

import typing
from collections import defaultdict

import jsonschema
import pytest
from django.test import Client
from pydantic import BaseModel

from memoryhub.api import api as ninja_api
from memoryhub.openapi import ERROR_SCHEMA, SCHEMAS


@pytest.fixture
def openapi(db) -> dict:
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def _models(annotation: object) -> typing.Iterator[type[BaseModel]]:
    """Every pydantic model named by a type annotation, at any depth."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _models(arg)


def _operation_models() -> set[type[BaseModel]]:
    """The body, parameter and response models of every operation, and the models inside them."""
    pending: list[type[BaseModel]] = []
    for _prefix, router in ninja_api._routers:
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                pending.extend(operation.models)
                for response in operation.response_models.values():
                    pending.extend(_models(response))
    seen: set[type[BaseModel]] = set()
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        for field in model.model_fields.values():
            pending.extend(_models(field.annotation))
    return seen


def _refs(node: object) -> typing.Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_no_two_models_share_a_component_name(openapi):
    # ninja names a component after its class, and a second class of the same name replaces
    # the first: the published schema would hide one of them.
    by_name: dict[str, set[str]] = defaultdict(set)
    for model in _operation_models():
        by_name[model.__name__].add(f"{model.__module__}.{model.__qualname__}")
    shared = {name: sorted(paths) for name, paths in by_name.items() if len(paths) > 1}
    assert shared == {}
    # The error schemas memoryhub/openapi.py adds replace no model's component.
    assert set(SCHEMAS) & set(by_name) == set()
    # The walk reaches nested models (a message inside a window inside a search answer).
    assert {"ChatSearchOut", "ChatSearchWindowOut", "ChatSearchMessageOut"} <= set(by_name)
    components = set(openapi["components"]["schemas"])
    # Ninja's own wrappers (the parameter models) are not components; the rest all are.
    assert {"ChatSearchIn", "SearchIn", "WindowOut", "ChatSearchWindowOut"} <= components


def test_every_reference_and_declared_response_schema_exists(openapi):
    components = openapi["components"]["schemas"]
    prefix = "#/components/schemas/"
    refs = set(_refs(openapi))
    assert all(ref.startswith(prefix) for ref in refs)
    assert {ref.removeprefix(prefix) for ref in refs} - set(components) == set()
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            assert any(s.startswith("2") for s in operation["responses"]), (method, path)
            for status, response in operation["responses"].items():
                for content in response.get("content", {}).values():
                    assert "$ref" in content["schema"] or "type" in content["schema"], (
                        method,
                        path,
                        status,
                    )


def _declared(openapi: dict, method: str, path: str) -> set[str]:
    return set(openapi["paths"][f"/api/v1{path}"][method]["responses"])


def test_error_responses_follow_what_an_operation_takes(openapi):
    # No input: only auth, the key's scope (a user-bound key naming another user in the query
    # string: docs/memory.md, "Keys and their scopes"), throttling and an unavailable
    # database can fail it.
    assert _declared(openapi, "get", "/agent") == {"200", "401", "403", "429", "503"}
    # A body: 413 for its size, 404 for an object it names (a session_id), 409 as a write.
    assert _declared(openapi, "post", "/facts") == {
        *("200", "201", "400", "401", "403", "404", "409", "413", "422", "429", "503")
    }
    # A path parameter and no body: 414 for a path over gunicorn's request line, no 409/413.
    assert _declared(openapi, "get", "/facts/{fact_id}") == {
        *("200", "400", "401", "403", "404", "414", "422", "429", "503")
    }
    # gunicorn answers a too-long request line itself, in HTML: declared without a body.
    assert "content" not in openapi["paths"]["/api/v1/facts/{fact_id}"]["get"]["responses"]["414"]
    error = openapi["paths"]["/api/v1/facts"]["post"]["responses"]["422"]
    assert error["content"]["application/json"]["schema"] == {
        "$ref": f"#/components/schemas/{ERROR_SCHEMA}"
    }


def test_real_error_bodies_match_the_declared_error_schema(openapi, api):
    validator = jsonschema.validators.validator_for({})(
        {"$ref": f"#/components/schemas/{ERROR_SCHEMA}", "components": openapi["components"]}
    )
    fact = api.post("/facts", {"value": "tea", "key": "drink"}).json()["fact"]
    api.post(f"/facts/{fact['id']}/supersede", {"value": "coffee"})
    answers = {
        400: api.get("/facts", {"cursor": "forged"}),
        401: Client().get("/api/v1/agent"),
        404: api.get("/facts/999999"),
        409: api.post(f"/facts/{fact['id']}/supersede", {"value": "water"}),
        422: api.post("/facts", {"key": 5}),
    }
    assert {status: r.status_code for status, r in answers.items()} == {s: s for s in answers}
    for response in answers.values():
        validator.validate(response.json())
    assert answers[409].json()["loc"] == ["path", "fact_id"]
    assert answers[422].json()["detail"][0]["loc"][0] == "body"
