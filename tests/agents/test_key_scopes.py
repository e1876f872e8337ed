"""Keys with scopes (issue 39): every operation of the live OpenAPI schema, called with a key
bound to Alice that names Caroline (in the query, the body, the path, a session) or asks for
every user, is a 403 before anything is parsed; with a read-only key every write is a 403 and
nothing changes; a bound key reads Alice's and the agent's memory alone and acts as Alice."""

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from django.apps import apps as django_apps
from django.test import Client

from apps.agents.models import Agent, ApiKey
from apps.agents.services import api_key_issue
from apps.learnings.models import ErrorRecord
from memoryhub.api import api as ninja_api
from tests.users.world import ALICE, CAROLINE, OPS_KEY, World, build

pytestmark = pytest.mark.django_db

PREFIX = "/api/v1"
# The POSTs that only read (issue 39); every other POST, PUT, PATCH and DELETE writes.
READ_POSTS = {"/search", "/memory/recall", "/memory/search", "/errors/search", "/context"}
# A minimal valid body of each operation that takes one.
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("patch", "/agent/settings"): {"settings": {"recall_k": 5}},
    ("post", "/context"): {"session_id": ALICE.session_key},
    ("post", "/entries"): {"name": "notes/new.md", "content": "new"},
    ("patch", "/entries/{name}"): {"name": "notes/renamed.md"},
    ("put", "/entries/{name}"): {"content": "rewritten"},
    ("post", "/entries/{name}/aliases"): {"alias": "notes/alias.md"},
    ("post", "/errors"): {"tool_name": "probe", "error": "failed"},
    ("post", "/errors/search"): {"query": "timeout"},
    ("patch", "/errors/{error_id}"): {"resolution": "retry later"},
    ("post", "/facts"): {"value": "a new fact"},
    ("patch", "/facts/{fact_id}"): {"value": "changed"},
    ("post", "/facts/{fact_id}/supersede"): {"value": "superseded"},
    ("post", "/learnings"): {"kind": "correction", "content": "a lesson"},
    ("patch", "/learnings/{learning_id}"): {"content": "changed"},
    ("post", "/memory/recall"): {"query": "music"},
    ("post", "/memory/save"): {"content": "a new fact"},
    ("post", "/memory/search"): {"query": "music"},
    ("post", "/search"): {"query": "music"},
    ("post", "/sessions"): {"key": "a-new-chat"},
    ("patch", "/sessions/{session_id}"): {"title": "renamed"},
    ("post", "/sessions/{session_id}/messages"): {"messages": [{"role": "user", "content": "hi"}]},
}
# The agent-level operations a user-bound key may not call at all (docs/memory.md).
AGENT_LEVEL = {
    ("patch", "/agent/settings"),
    ("post", "/workspace/import"),
    ("get", "/users"),
    ("patch", "/errors/{error_id}"),
    ("delete", "/errors/{error_id}"),
    ("post", "/errors/{error_id}/promote"),
}


def operations() -> list[tuple[str, str, dict]]:
    """(method, path under /api/v1, operation) of every operation the live schema publishes."""
    schema = ninja_api.get_openapi_schema()
    return [
        (method, path.removeprefix(PREFIX), op)
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
    ]


def is_write(method: str, path: str) -> bool:
    return method != "get" and not (method == "post" and path in READ_POSTS)


@pytest.fixture
def world(api, django_capture_on_commit_callbacks) -> World:
    with django_capture_on_commit_callbacks(execute=True):
        return build(api)


def scoped_key(agent: Agent, *, user: str | None = None, read_only: bool = False) -> str:
    return api_key_issue(agent=agent, name="scoped", user=user, read_only=read_only).raw


def call(key: str, method: str, path: str, query: dict | None = None, body: Any = None):
    url = PREFIX + path + (f"?{urlencode(query)}" if query else "")
    data = json.dumps(body) if body is not None else ""
    return Client().generic(
        method.upper(),
        url,
        data,
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )


def _first(world: World, owner: str, kind: str) -> Any:
    return world.of(owner, kind)[0].id


def fill(path: str, world: World, *, of: str) -> str:
    """`path` with each parameter a real row of the user `of` where it names one."""
    values = {
        "session_id": world.sessions[of]["id"],
        "fact_id": _first(world, of, "fact"),
        "learning_id": _first(world, of, "learning"),
        "run_id": _first(world, of, "run"),
        "error_id": ErrorRecord.objects.order_by("pk").values_list("pk", flat=True).first(),
        "name": "HISTORY.md" if path.startswith("/memory/history") else "notes/caroline.md",
        "user": of,
    }
    for name, value in values.items():
        path = path.replace("{" + name + "}", str(value))
    assert "{" not in path, path
    return path


def body_of(method: str, path: str, op: dict) -> dict | None:
    if "requestBody" not in op:
        return None
    assert (method, path) in BODIES, f"no minimal body for {method} {path}"
    return dict(BODIES[(method, path)])


def _every(world: World) -> Iterator[tuple[str, str, str, dict | None]]:
    for method, path, op in operations():
        yield method, path, fill(path, world, of=CAROLINE.user), body_of(method, path, op)


def _plain(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else str(value)


def snapshot() -> dict[str, str]:
    """Every row of every memoryhub model but the keys (their use is recorded), as JSON."""
    return {
        model._meta.label: json.dumps(list(model.objects.order_by("pk").values()), default=_plain)
        for model in django_apps.get_models()
        if model.__module__.startswith("apps.") and model is not ApiKey
    }


def test_the_schema_is_enumerated_whole(world):
    found = operations()

    assert len(found) == 58
    with_body = {(m, p) for m, p, op in found if "requestBody" in op}
    assert with_body == set(BODIES)
    assert {(m, p) for m, p, _ in found} >= AGENT_LEVEL


def test_naming_another_user_in_the_query_is_403_on_every_operation(agent, world):
    key = scoped_key(agent, user=ALICE.user)
    answers = {}
    for method, path, url, body in _every(world):
        response = call(key, method, url, {"user": CAROLINE.user}, body)
        answers[(method, path)] = (response.status_code, "detail" in response.json())

    assert answers == dict.fromkeys(answers, (403, True))
    assert len(answers) == len(operations())


def test_naming_another_user_in_the_body_is_403_on_every_operation_with_one(agent, world):
    key = scoped_key(agent, user=ALICE.user)
    answers = {}
    for method, path, _url, body in _every(world):
        if body is None:
            continue
        url = fill(path, world, of=ALICE.user).replace("notes/caroline.md", "notes/alice.md")
        response = call(key, method, url, body={**body, "user": CAROLINE.user})
        answers[(method, path)] = response.status_code

    assert answers == dict.fromkeys(BODIES, 403)


@pytest.mark.parametrize("where", ["query", "body"])
def test_all_users_is_403_on_every_operation(agent, world, where):
    key = scoped_key(agent, user=ALICE.user)
    before = snapshot()
    answers = {}
    for method, path, _url, body in _every(world):
        url = fill(path, world, of=ALICE.user)
        if where == "query":
            response = call(key, method, url, {"all_users": "0"}, body)
        elif body is not None:
            response = call(key, method, url, body={**body, "all_users": True})
        else:
            continue
        answers[(method, path)] = response.status_code

    assert answers == dict.fromkeys(answers, 403)
    assert len(answers) == (len(operations()) if where == "query" else len(BODIES))
    assert snapshot() == before


def test_a_session_of_another_user_or_of_none_is_403_in_the_path(agent, world):
    key = scoped_key(agent, user=ALICE.user)
    session_paths = [(m, p, op) for m, p, op in operations() if "{session_id}" in p]
    assert len(session_paths) == 12
    for owner in (CAROLINE.user, ""):
        ref = world.sessions[owner]["key"]
        answers = {
            (m, p): call(key, m, p.replace("{session_id}", ref), body=body_of(m, p, op)).status_code
            for m, p, op in session_paths
        }
        assert answers == {(m, p): 403 for m, p, _ in session_paths}, owner


def test_a_session_of_another_user_is_403_in_a_body_or_query(agent, world):
    key = scoped_key(agent, user=ALICE.user)
    caroline = world.sessions[CAROLINE.user]["id"]
    answers = [
        call(key, "post", "/context", body={"session_id": caroline}),
        call(key, "post", "/memory/save", body={"content": "x", "session_id": caroline}),
        call(key, "post", "/memory/search", body={"query": "x", "session_id": caroline}),
        call(key, "post", "/search", body={"query": "x", "session_id": CAROLINE.session_key}),
        call(key, "post", "/errors", body={"tool_name": "t", "error": "e", "session_id": caroline}),
        call(key, "post", "/sessions", body={"key": CAROLINE.session_key}),
        call(key, "post", "/sessions", body={"key": OPS_KEY}),
        call(key, "get", "/runs", {"session_id": caroline}),
        call(key, "get", "/memory/history", {"session_id": caroline}),
    ]

    assert [r.status_code for r in answers] == [403] * len(answers)
    assert answers[0].json() == {
        "detail": f"this key acts for user '{ALICE.user}' only; session '{caroline}' is of "
        "another user"
    }


def test_a_repeated_query_parameter_cannot_smuggle_another_user(agent, world):
    key = scoped_key(agent, user=ALICE.user)
    url = f"{PREFIX}/facts?user={CAROLINE.user}&user={ALICE.user}"

    response = Client().get(url, headers={"Authorization": f"Bearer {key}"})

    assert response.status_code == 403
    assert response.json() == {
        "detail": "a scoped key gives each query parameter once: 'user' differs"
    }


def test_even_an_operation_without_user_refuses_another_user(agent, world):
    key = scoped_key(agent, user=ALICE.user)

    response = call(key, "get", "/agent", {"user": CAROLINE.user})

    assert response.status_code == 403
    assert response.json() == {
        "detail": f"this key acts for user '{ALICE.user}' only; it may not name another"
    }
    assert call(key, "get", "/agent", {"user": ALICE.user}).status_code == 200


def test_agent_level_operations_are_403_for_a_bound_key(agent, world):
    key = scoped_key(agent, user=ALICE.user)
    answers = {}
    for method, path, op in operations():
        if (method, path) in AGENT_LEVEL:
            url = fill(path, world, of=ALICE.user)
            answers[(method, path)] = call(key, method, url, body=body_of(method, path, op))

    assert {op: r.status_code for op, r in answers.items()} == dict.fromkeys(AGENT_LEVEL, 403)
    assert answers[("get", "/users")].json() == {
        "detail": f"this key acts for user '{ALICE.user}' only; this operation is the agent's"
    }


def test_a_bound_key_may_not_write_the_agents_own_memory(agent, world):
    key = scoped_key(agent, user=ALICE.user)
    agent_fact = _first(world, "", "fact")
    agent_learning = _first(world, "", "learning")
    before = snapshot()

    answers = [
        call(key, "post", "/memory/save", body={"content": "x", "scope": "agent"}),
        call(key, "post", "/facts", body={"value": "x", "scope": "agent"}),
        call(key, "put", "/entries/MEMORY.md", body={"content": "x", "scope": "agent"}),
        call(key, "delete", "/entries/MEMORY.md", {"scope": "agent"}),
        call(key, "patch", f"/facts/{agent_fact}", body={"value": "changed"}),
        call(key, "delete", f"/facts/{agent_fact}"),
        call(key, "post", f"/facts/{agent_fact}/supersede", body={"value": "x"}),
        call(key, "patch", f"/learnings/{agent_learning}", body={"content": "x"}),
        call(key, "delete", f"/learnings/{agent_learning}"),
        # POST /errors takes `user` (issue 39): a bound key records its user's failure,
        # shared de-identified (tests/learnings/test_person_safe_errors.py)
    ]

    assert [r.status_code for r in answers] == [403] * len(answers)
    assert answers[4].json() == {
        "detail": f"this key acts for user '{ALICE.user}' only; it may not change the agent's "
        "own memory"
    }
    assert snapshot() == before


def test_a_read_only_key_writes_nothing(agent, world):
    key = scoped_key(agent, read_only=True)
    before = snapshot()
    answers = {}
    for method, path, url, body in _every(world):
        if is_write(method, path):
            answers[(method, path)] = call(key, method, url, body=body)

    assert len(answers) == sum(is_write(m, p) for m, p, _ in operations())
    assert {op: r.status_code for op, r in answers.items()} == dict.fromkeys(answers, 403)
    assert {r.json()["detail"] for r in answers.values()} == {
        "this key is read-only; this operation writes"
    }
    assert snapshot() == before


def test_a_read_only_key_reads_and_its_context_runs_no_lifecycle(agent, world):
    key = scoped_key(agent, read_only=True)
    before = snapshot()

    facts = call(key, "get", "/facts", {"all_users": "1", "limit": 100})
    context = call(
        key, "post", "/context", body={"session_id": ALICE.session_key, "lifecycle": "wait",
                                       "max_tokens": 64, "observed_tokens": 10_000_000},
    )  # fmt: skip

    assert facts.status_code == 200
    assert context.status_code == 200, context.content
    usage = context.json()["usage"]
    assert (usage["action"], usage["action_status"], usage["runs"]) == ("compact", "off", [])
    assert snapshot() == before


def _ids(response) -> set:
    assert response.status_code == 200, response.content
    return {item["id"] for item in response.json()["items"]}


def test_a_bound_key_reads_its_users_and_the_agents_memory_alone(agent, world):
    key = scoped_key(agent, user=ALICE.user)
    mine = (ALICE.user, "")

    assert _ids(call(key, "get", "/facts", {"limit": 100})) == {
        i.id for o in mine for i in world.of(o, "fact")
    }
    assert _ids(call(key, "get", "/learnings", {"limit": 100})) == {
        i.id for o in mine for i in world.of(o, "learning")
    }
    entries = _ids(call(key, "get", "/entries", {"limit": 100}))
    assert world.ids(ALICE.user, "entry") <= entries
    assert not entries & world.ids(CAROLINE.user, "entry")
    assert _ids(call(key, "get", "/sessions")) == {world.sessions[ALICE.user]["id"]}
    caroline_fact = _first(world, CAROLINE.user, "fact")
    assert call(key, "get", f"/facts/{caroline_fact}").status_code == 404


def test_a_bound_key_acts_as_its_user(agent, world):
    key = scoped_key(agent, user=ALICE.user)

    session = call(key, "post", "/sessions", body={"key": "alice-second-chat"})
    saved = call(key, "post", "/memory/save", body={"content": "Alice collects stamps"})
    fact = call(key, "post", "/facts", body={"value": "Alice flies kites"})

    assert (session.status_code, session.json()["user"]) == (201, ALICE.user)
    assert saved.status_code == 200, saved.content
    assert saved.json()["fact"]["user"] == ALICE.user
    assert fact.json()["fact"]["user"] == ALICE.user


def test_a_bound_key_may_erase_its_own_user(agent, world):
    key = scoped_key(agent, user=ALICE.user)

    assert call(key, "delete", f"/users/{CAROLINE.user}").status_code == 403
    response = call(key, "delete", f"/users/{ALICE.user}")

    assert response.status_code == 200, response.content
    assert response.json()["user"] == ALICE.user


def test_the_schema_declares_403_on_every_keyed_operation():
    declared = {(m, p): "403" in op["responses"] for m, p, op in operations()}

    assert declared == dict.fromkeys(declared, True)


def test_a_bound_key_on_its_own_rows_is_refused_only_the_agents_operations(agent, world):
    """No operation refuses a bound key that names nothing but its own user's rows, except
    the agent-level ones: the check blocks what it must and nothing more."""
    key = scoped_key(agent, user=ALICE.user)
    answers = {}
    for method, path, op in operations():
        url = fill(path, world, of=ALICE.user).replace("notes/caroline.md", "notes/alice.md")
        body = body_of(method, path, op)
        if (method, path) == ("post", "/errors"):
            body = {**(body or {}), "session_id": ALICE.session_key}
        answers[(method, path)] = call(key, method, url, body=body).status_code

    refused = {op for op, status in answers.items() if status == 403}
    assert refused == AGENT_LEVEL
    assert {op: s for op, s in answers.items() if s >= 500} == {}
