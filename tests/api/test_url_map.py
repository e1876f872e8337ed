"""The URL is the map (issue 40): every published path lives in the module of apps/api/ named
by its first segment, declared there exactly as published (no path converter in the declared
path: a grep for the URL finds its endpoint), and its operationId is
`<first segment>_<action>`. Modules of apps/api/ without a router are helpers, not URLs."""

import pkgutil
import re
from collections import Counter
from importlib import import_module
from pathlib import Path

import pytest
from ninja import Router

import apps.api
from memoryhub.api import SEGMENTS, api
from memoryhub.openapi import first_segment, operation_id

PREFIX = "/api/v1"


def _published() -> list[tuple[str, str, str]]:
    """(path, method, module) of every published operation, from the routers themselves."""
    schema = api.get_openapi_schema()
    found = []
    for _prefix, router in api._routers:  # every router is added at /
        for path, view in router.path_operations.items():
            for operation in view.operations:
                if not operation.include_in_schema:
                    continue
                published = re.sub(r"{[^}:]+:", "{", PREFIX + path)
                for method in operation.methods:
                    assert schema["paths"][published][method.lower()]
                    found.append((published, method, operation.view_func.__module__))
    return found


def test_every_published_path_is_in_the_module_of_its_first_segment():
    published = _published()
    misplaced = [
        (method, path, module)
        for path, method, module in published
        if module != f"apps.api.{first_segment(path)}"
    ]

    assert misplaced == []
    assert len(published) == len(
        [m for ops in api.get_openapi_schema()["paths"].values() for m in ops]
    )


def test_each_url_module_serves_its_segment_and_every_segment_has_one():
    served = {first_segment(path) for path, _, _ in _published()}
    routed = {
        info.name
        for info in pkgutil.iter_modules(apps.api.__path__)
        if isinstance(getattr(import_module(f"apps.api.{info.name}"), "router", None), Router)
    }

    assert served == routed == set(SEGMENTS)


def test_each_path_is_declared_as_published():
    for path, method, module in _published():
        source = Path(import_module(module).__file__).read_text()
        declared = path.removeprefix(PREFIX)
        assert f'"{declared}"' in source, (method, path)
        assert not re.search(r"{\w+:\w+}", declared)


def test_every_operation_id_is_its_resource_and_action_and_unique():
    operations = [
        (path, operation)
        for path, methods in api.get_openapi_schema()["paths"].items()
        for operation in methods.values()
    ]
    ids = [operation["operationId"] for _, operation in operations]

    assert [i for i, n in Counter(ids).items() if n > 1] == []
    for path, operation in operations:
        assert operation["operationId"].startswith(first_segment(path).replace("-", "_") + "_")
    named = {(p, o["operationId"]) for p, o in operations}
    assert {
        ("/api/v1/sessions/{session_id}/messages", "sessions_append_messages"),
        ("/api/v1/memory/history", "memory_history"),
        ("/api/v1/users/{user}", "users_erase"),
    } <= named


@pytest.mark.parametrize(
    ("path", "name", "expected"),
    [
        ("/sessions/{session_id}/reset", "reset_session", "sessions_reset"),
        ("/memory/save", "memory_save", "memory_save"),
        ("/entries/{name}", "get_entry", "entries_get"),
        ("/search", "search_chat_history", "search_chat_history"),
        ("/facts/{fact_id}/versions", "fact_versions", "facts_versions"),
        ("/sessions/{session_id}/messages", "list_messages", "sessions_list_messages"),
        ("/team-plans/x", "list_team_plans", "team_plans_list"),
    ],
)
def test_operation_id_drops_the_resource_noun_from_the_name(path, name, expected):
    assert operation_id(path, name) == expected


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("sent", "user"),
    [("team/ana", "team/ana"), ("telegram:42", "telegram:42"), ("a%2Fb%3A1", "a/b:1")],
)
def test_a_user_path_takes_the_rest_of_the_url_slashes_included(api, sent, user):
    # Declared /users/{user}; `user: PathRest` gives it Django's path converter.
    response = api.delete(f"/users/{sent}")

    assert (response.status_code, response.json()["user"]) == (200, user)


@pytest.mark.django_db
def test_an_int_path_parameter_is_digits_only(api):
    # Declared /facts/{fact_id}; `fact_id: PathInt`: anything else is no such URL.
    assert api.get("/facts/not-a-number").status_code == 404
    assert api.get("/facts/12345").json() == {"detail": "fact not found"}
