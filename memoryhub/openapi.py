"""The published OpenAPI schema declares the error responses the API really gives.

Errors are mapped once, for every operation, in memoryhub/api.py; so they are declared once
here, by what an operation takes (auth, path, query, body), not on each endpoint.
"""

from typing import Any

from ninja import NinjaAPI
from ninja.openapi.schema import OpenAPISchema
from ninja.operation import Operation
from pydantic.json_schema import JsonSchemaValue

# An object of the OpenAPI document, as ninja builds it (OpenAPISchema is one).
OpenApiObject = dict[str, Any]  # Any: ninja types its OpenAPI document dict[str, Any]

ERROR_SCHEMA = "ApiError"  # not "Error": the error memory has ErrorIn/ErrorOut
VALIDATION_ITEM_SCHEMA = "ApiErrorItem"

SCHEMAS: dict[str, JsonSchemaValue] = {
    VALIDATION_ITEM_SCHEMA: {
        "title": VALIDATION_ITEM_SCHEMA,
        "type": "object",
        "properties": {
            "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
            "msg": {"type": "string"},
            "type": {"type": "string"},
        },
        "required": ["loc", "msg", "type"],
    },
    ERROR_SCHEMA: {
        "title": ERROR_SCHEMA,
        "description": "Every error: a message, or for invalid input a list of {loc, msg, type}.",
        "type": "object",
        "properties": {
            "detail": {
                "anyOf": [
                    {"type": "string"},
                    {
                        "type": "array",
                        "items": {"$ref": f"#/components/schemas/{VALIDATION_ITEM_SCHEMA}"},
                    },
                ]
            },
            "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        },
        "required": ["detail"],
    },
}

DESCRIPTIONS = {
    "400": "Bad request: a malformed query parameter or cursor",
    "401": "Missing, malformed or revoked API key",
    "403": "The key's scope forbids this: another user than the key's, or a write with a "
    "read-only key",
    "404": "No such object for this agent",
    "409": "Conflicts with the current state",
    "413": "A body, value or batch over its size limit",
    "414": "The request line is over the web server's limit",
    "422": "Invalid input; `detail` lists each field at fault",
    "429": "Too many requests; see Retry-After",
    "503": "A dependency (database, embedder) is unavailable",
}
# Answered by the web server (gunicorn) before the request reaches Django: no JSON body.
NO_BODY = {"414"}
WRITES = {"post", "put", "patch", "delete"}


def first_segment(path: str) -> str:
    """A path's first segment, as its module and operationIds name it ("sessions" for
    /api/v1/sessions/{session_id}/messages)."""
    return path.removeprefix("/api/v1").strip("/").split("/")[0]


def _nouns(segment: str) -> tuple[str, ...]:
    """The words that name the segment's resource: itself and its singular."""
    singular = segment[:-3] + "y" if segment.endswith("ies") else segment.removesuffix("s")
    return (segment, singular)


def operation_id(path: str, name: str) -> str:
    """`<resource>_<action>`: the path's first segment (a '-' as '_'), and the endpoint's name
    without that resource's noun before or after it (sessions' reset_session: sessions_reset;
    memory's memory_save: memory_save; sessions' append_messages stays)."""
    segment = first_segment(path).replace("-", "_")
    action = name
    for noun in _nouns(segment):
        action = action.removeprefix(f"{noun}_").removesuffix(f"_{noun}")
    return f"{segment}_{action}"


def error_statuses(operation: OpenApiObject, method: str) -> set[str]:
    """The error statuses an operation can answer, from what it takes."""
    places = {p.get("in") for p in operation.get("parameters", [])}
    has_body = "requestBody" in operation
    statuses = {"503"}
    if operation.get("security"):
        # Every keyed operation: a user-bound key refuses another user named in any query.
        statuses |= {"401", "403", "429"}
    if places or has_body:
        # Any input may name an object that does not exist: a path id, a session_id.
        statuses |= {"400", "404", "422"}
    if places & {"path", "query"}:
        statuses.add("414")
    if has_body:
        statuses.add("413")
    if method in WRITES:
        statuses.add("409")
    return statuses


def declare_errors(schema: OpenAPISchema) -> OpenAPISchema:
    """Add the error body schemas and each operation's error responses (kept if declared)."""
    schema.setdefault("components", {}).setdefault("schemas", {}).update(SCHEMAS)
    body = {"application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_SCHEMA}"}}}
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for status in sorted(error_statuses(operation, method)):
                response: OpenApiObject = {"description": DESCRIPTIONS[status]}
                if status not in NO_BODY:
                    response["content"] = body
                responses.setdefault(status, response)
    return schema


class DocumentedNinjaAPI(NinjaAPI):
    """NinjaAPI whose OpenAPI schema lists the error responses (declare_errors) and names
    each operation `<resource>_<action>` (operation_id)."""

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: OpenApiObject | None = None
    ) -> OpenAPISchema:
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        return declare_errors(schema)

    def get_openapi_operation_id(self, operation: Operation) -> str:
        return operation_id(operation.path, operation.view_func.__name__)
