"""The client cannot drift from the server: the server's OpenAPI schema, generated live from
its NinjaAPI, is compared with the client's models (every property of every component, with
its type and required-ness, and no field the server lacks) and methods (every operation has
one, reading the answer the server declares). The last test doctors a copy of the schema and
checks that the comparison reports exactly what was changed."""

import copy
import json

import pytest
from memoryhub_client import API_VERSION, __version__
from memoryhub_client._call import API_PREFIX, OPERATIONS
from memoryhub_client.models import COMPONENTS

from memoryhub.api import api
from tests.clients.drift import compare_components, compare_operations


@pytest.fixture(scope="module")
def server() -> dict:
    return json.loads(json.dumps(api.get_openapi_schema()))


def test_the_clients_major_version_is_the_servers_api_version(server):
    assert (__version__.split(".")[0], API_VERSION) == (api.version, api.version)
    assert server["info"]["version"] == api.version
    # The path names the URL scheme, the version the contract (docs/architecture.md).
    assert API_PREFIX == "/api/v1"
    # The client calls the paths the server serves.
    assert {path.startswith(API_PREFIX + "/") for path in server["paths"]} == {True}


def test_every_client_model_matches_its_server_schema(server):
    assert compare_components(server, COMPONENTS) == []


def test_every_server_operation_has_a_client_method_reading_its_answer(server):
    assert compare_operations(server, OPERATIONS, COMPONENTS) == []


def test_the_comparison_reports_a_renamed_a_retyped_field_and_a_new_operation(server):
    doctored = copy.deepcopy(server)
    schemas = doctored["components"]["schemas"]
    session = schemas["SessionOut"]
    session["properties"]["label"] = session["properties"].pop("title")
    session["required"] = ["label" if f == "title" else f for f in session["required"]]
    schemas["MessageOut"]["properties"]["token_count"] = {"type": "string"}
    schemas["WindowOut"]["required"].append("recap")
    doctored["paths"]["/api/v1/sessions/{session_id}/export"] = {
        "get": copy.deepcopy(server["paths"]["/api/v1/sessions/{session_id}"]["get"])
    }
    window = doctored["paths"]["/api/v1/sessions/{session_id}/window"]["get"]
    window["responses"]["200"]["content"]["application/json"]["schema"] = {
        "$ref": "#/components/schemas/SessionOut"
    }

    # Measured against the real schema's own report ([] when the two are in step), so this
    # shows what the doctoring adds whatever else is in flight.
    before = compare_components(server, COMPONENTS)
    after = compare_components(doctored, COMPONENTS)
    assert [found for found in after if found not in before] == [
        "MessageOut.token_count: server string, client integer",
        "SessionOut.label: on the server, not in the client's Session",
        "SessionOut.title: in the client's Session, not on the server",
        "WindowOut.recap: required on the server, not in the client's Window",
    ]
    assert set(before) <= set(after)
    before = compare_operations(server, OPERATIONS, COMPONENTS)
    after = compare_operations(doctored, OPERATIONS, COMPONENTS)
    assert [found for found in after if found not in before] == [
        "GET /api/v1/sessions/{session_id}/export: no client method",
        "GET /api/v1/sessions/{session_id}/window: the server answers <SessionOut>, "
        "_Hub.window reads <WindowOut>",
    ]
    assert set(before) <= set(after)
