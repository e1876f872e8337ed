"""The published OpenAPI schema declares the error responses the API really gives.

Errors are mapped once, for every operation, in memoryhub/api.py; so they are declared once
here, by what an operation takes (auth, path, query, body), not on each endpoint.
"""

from typing import Any

from ninja import NinjaAPI
from ninja.operation import Operation

ERROR_SCHEMA = "ApiError"  # not "Error": the error memory has ErrorIn/ErrorOut
VALIDATION_ITEM_SCHEMA = "ApiErrorItem"

SCHEMAS: dict[str, dict[str, Any]] = {
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

# operationIds are published: client generators name their methods after them. ninja derives
# one from the endpoint's module and name; issue 25 moved the endpoints to apps/api/, so each
# keeps the module it was first published from. A new endpoint gets its own module's.
FIRST_MODULE = {
    name: module
    for module, names in {
        "apps.agents.api": "get_agent update_settings get_team_agents_md",
        "apps.conversations.api": "create_session list_sessions get_window search_chat_history",
        "apps.search.api": "search_status",
        "apps.facts.api": "list_facts create_fact get_fact update_fact supersede_fact "
        "fact_versions delete_fact",
        "apps.entries.api": "add_entry list_entries search_entries alias_entry get_entry "
        "write_entry rename_entry remove_entry",
        "apps.lifecycle.api": "list_runs get_run summarize compact flush consolidate "
        "reset_session history history_file",
        "apps.memory.api": "list_messages append_messages memory_save memory_recall "
        "memory_search context export_workspace import_workspace",
        "apps.memory.sessions_api": "get_session update_session remove_session",
        "apps.memory.learnings_api": "remember_error list_errors search_errors get_error "
        "update_error delete_error promote_error add_learning list_learnings get_learning "
        "update_learning delete_learning",
    }.items()
    for name in names.split()
}


def error_statuses(operation: dict[str, Any], method: str) -> set[str]:
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


def declare_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the error body schemas and each operation's error responses (kept if declared)."""
    schema.setdefault("components", {}).setdefault("schemas", {}).update(SCHEMAS)
    body = {"application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_SCHEMA}"}}}
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for status in sorted(error_statuses(operation, method)):
                response: dict[str, Any] = {"description": DESCRIPTIONS[status]}
                if status not in NO_BODY:
                    response["content"] = body
                responses.setdefault(status, response)
    return schema


class DocumentedNinjaAPI(NinjaAPI):
    """NinjaAPI whose OpenAPI schema lists the error responses (declare_errors) and keeps
    each endpoint's first operationId (FIRST_MODULE)."""

    def get_openapi_schema(self, **kwargs: Any) -> Any:
        return declare_errors(super().get_openapi_schema(**kwargs))

    def get_openapi_operation_id(self, operation: Operation) -> str:
        name = operation.view_func.__name__
        module = FIRST_MODULE.get(name, operation.view_func.__module__)
        return f"{module}_{name}".replace(".", "_")
