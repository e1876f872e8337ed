"""Issue 26: a session names its end user; what is remembered there is theirs; the lifecycle
writes a user's session's memory as theirs; a user's workspace export holds their memory
alone. (The read-path isolation suite is tests/memory/test_user_isolation.py.)"""

import io
import json
import tarfile

import pytest

from apps.core.errors import Conflict, NotFound
from apps.entries.models import Entry
from apps.facts.models import Fact
from apps.facts.services import fact_merge, fact_save
from apps.learnings.models import Learning
from apps.lifecycle.models import HistoryEntry, Run
from apps.mcp.resources import resource_list, resource_read

pytestmark = pytest.mark.django_db(transaction=True)


def _session(api, key: str, user: str | None = None) -> dict:
    body = {"key": key} if user is None else {"key": key, "user": user}
    response = api.post("/sessions", body)
    assert response.status_code in (200, 201), response.content
    return response.json()


def _append(api, session_id: str, *texts: str) -> None:
    messages = [{"role": "user", "content": t} for t in texts]
    response = api.post(f"/sessions/{session_id}/messages", {"messages": messages})
    assert response.status_code == 201, response.content


def test_a_session_names_its_user_and_keeps_it(api):
    created = api.post("/sessions", {"key": "telegram:42", "user": " telegram:42 "})
    assert created.status_code == 201
    assert created.json()["user"] == "telegram:42"  # stripped
    plain = _session(api, "cli")
    assert plain["user"] is None

    again = api.post("/sessions", {"key": "telegram:42", "user": "telegram:42"})
    assert (again.status_code, again.json()["id"]) == (200, created.json()["id"])
    without = api.post("/sessions", {"key": "telegram:42"})
    assert (without.status_code, without.json()["user"]) == (200, "telegram:42")
    taken = api.post("/sessions", {"key": "telegram:42", "user": "telegram:7"})
    assert taken.status_code == 409
    assert "another user" in taken.json()["detail"]

    listed = api.get("/sessions", {"user": "telegram:42"}).json()["items"]
    assert [s["key"] for s in listed] == ["telegram:42"]
    # without user: the agent's own sessions; every session with all_users
    assert {s["key"] for s in api.get("/sessions").json()["items"]} == {"cli"}
    every = api.get("/sessions", {"all_users": "1"}).json()["items"]
    assert {s["key"] for s in every} == {"telegram:42", "cli"}
    fetched = api.get(f"/sessions/{created.json()['id']}").json()
    assert fetched["user"] == "telegram:42"
    # A session's user is set once: PATCH does not take one, and asking is a 422.
    patched = api.patch(f"/sessions/{created.json()['id']}", {"title": "Ann", "user": "x"})
    assert (patched.status_code, patched.json()["detail"][0]["loc"]) == (
        422,
        ["body", "payload", "user"],
    )
    fetched = api.get(f"/sessions/{created.json()['id']}").json()
    assert (fetched["title"], fetched["user"]) == (created.json()["title"], "telegram:42")


@pytest.mark.parametrize("bad", ["", "   ", "a\nb", "tab\there", "x" * 201])
def test_a_user_that_is_no_name_is_422(api, bad):
    response = api.post("/sessions", {"key": "k1", "user": bad})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "user"
    assert api.get("/sessions").json()["items"] == []
    saved = api.post("/memory/save", {"content": "Likes tea", "user": bad})
    assert saved.status_code == 422
    assert Fact.objects.count() == 0
    assert api.get("/facts", {"user": bad}).status_code == 422


def test_a_user_that_differs_from_the_sessions_is_422_and_writes_nothing(api):
    session = _session(api, "s1", "telegram:1")
    response = api.post(
        "/memory/save", {"content": "Likes tea", "session_id": session["id"], "user": "telegram:2"}
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "user"]
    assert Fact.objects.count() == 0
    assert (
        api.post(
            "/memory/search", {"query": "tea", "session_id": session["id"], "user": "telegram:2"}
        ).status_code
        == 422
    )
    assert (
        api.post(
            "/memory/recall", {"query": "tea", "session_id": session["id"], "user": "telegram:2"}
        ).status_code
        == 422
    )


def test_scope_user_without_a_user_is_422(api):
    response = api.post("/memory/save", {"content": "Likes tea", "scope": "user"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "scope"]
    assert api.post("/entries", {"name": "n.md", "scope": "user"}).status_code == 422
    assert Fact.objects.count() == Entry.objects.count() == 0


def test_a_save_in_a_users_session_is_theirs_unless_scope_is_agent(api):
    session = _session(api, "s1", "telegram:1")
    mine = api.post("/memory/save", {"content": "Ann is vegetarian", "session_id": session["id"]})
    assert mine.status_code == 200
    assert mine.json()["fact"]["user"] == "telegram:1"
    shared = api.post(
        "/memory/save",
        {"content": "The shop opens at nine", "session_id": session["id"], "scope": "agent"},
    )
    assert shared.json()["fact"]["user"] is None
    # the daily log of each save is its owner's
    logs = Entry.objects.filter(name=mine.json()["log"]).order_by("user")
    assert [(e.user, "vegetarian" in e.content, "nine" in e.content) for e in logs] == [
        ("", False, True),
        ("telegram:1", True, False),
    ]


def test_the_same_fact_of_two_users_is_two_facts(api):
    for user in ("telegram:1", "telegram:2"):
        saved = api.post("/memory/save", {"content": "Has a dog named Rex", "user": user})
        assert (saved.status_code, saved.json()["action"]) == (200, "created")
    again = api.post("/memory/save", {"content": "Has a dog named Rex", "user": "telegram:2"})
    assert (again.status_code, again.json()["action"]) == (200, "reinforced")
    assert sorted(Fact.objects.values_list("user", flat=True)) == ["telegram:1", "telegram:2"]


def test_entries_are_named_per_owner(api):
    for body in (
        {"name": "MEMORY.md", "content": "agent memory"},
        {"name": "MEMORY.md", "content": "ann's memory", "user": "telegram:1"},
    ):
        assert api.post("/entries", body).status_code == 201
    assert api.get("/entries/MEMORY.md").json()["content"] == "agent memory"
    own = api.get("/entries/MEMORY.md", {"user": "telegram:1"}).json()
    assert (own["content"], own["user"]) == ("ann's memory", "telegram:1")
    other = api.get("/entries/MEMORY.md", {"user": "telegram:2"}).json()
    assert (other["content"], other["user"]) == ("agent memory", None)
    written = api.client.put(
        "/api/v1/entries/MEMORY.md",
        json.dumps({"content": "ann, updated", "user": "telegram:1"}),
        content_type="application/json",
        headers=api._headers(),
    )
    assert written.status_code == 200
    assert sorted(Entry.objects.values_list("user", "content")) == [
        ("", "agent memory"),
        ("telegram:1", "ann, updated"),
    ]
    gone = api.delete("/entries/MEMORY.md?user=telegram:1")
    assert gone.status_code == 204
    assert list(Entry.objects.values_list("user", "content")) == [("", "agent memory")]
    assert api.delete("/entries/MEMORY.md?user=telegram:1").status_code == 404


def test_get_context_shows_the_users_documents_beside_the_agents(api):
    api.post("/entries", {"name": "MEMORY.md", "content": "Agent-wide: be kind."})
    api.post("/entries", {"name": "USER.md", "content": "Ann likes tea.", "user": "telegram:1"})
    api.post("/entries", {"name": "USER.md", "content": "Bo likes coffee.", "user": "telegram:2"})
    session = _session(api, "s1", "telegram:1")
    context = api.post("/context", {"session_id": session["id"]}).json()
    documents = [(p["name"], p["content"]) for p in context["system"]["parts"]]
    assert documents == [
        ("users/telegram:1/USER.md", "Ann likes tea."),
        ("MEMORY.md", "Agent-wide: be kind."),
    ]


def test_consolidation_in_a_users_session_writes_their_history_and_memory(api, agent):
    session = _session(api, "s1", "telegram:1")
    _append(api, session["id"], "I am a vegetarian.", "I live in Lisbon.", "My cat is Tom.")
    done = api.post(f"/sessions/{session['id']}/consolidate", {})
    assert done.status_code == 200, done.content
    history = list(HistoryEntry.objects.filter(agent=agent).values_list("user", flat=True))
    assert history
    assert set(history) == {"telegram:1"}
    runs = set(Run.objects.filter(agent=agent).values_list("user", flat=True))
    assert runs == {"telegram:1"}
    memory = list(Entry.objects.filter(name="MEMORY.md").values_list("user", flat=True))
    assert memory == ["telegram:1"]
    listed = api.get("/memory/history", {"user": "telegram:2"}).json()["items"]
    assert listed == []
    own = api.get("/memory/history", {"user": "telegram:1"}).json()["items"]
    assert [h["user"] for h in own] == ["telegram:1"] * len(history)


def test_corrections_are_the_users_and_errors_the_agents(api):
    session = _session(api, "s1", "telegram:1")
    correction = api.post(
        "/learnings",
        {"kind": "correction", "content": "Ann spells it Anne", "session_id": session["id"]},
    )
    error = api.post(
        "/learnings",
        {"kind": "error", "content": "The map tool needs a city", "session_id": session["id"]},
    )
    assert (correction.json()["user"], error.json()["user"]) == ("telegram:1", None)
    assert sorted(Learning.objects.values_list("kind", "user")) == [
        ("correction", "telegram:1"),
        ("error", ""),
    ]
    seen = api.get("/learnings", {"user": "telegram:2"}).json()["items"]
    assert [item["kind"] for item in seen] == ["error"]
    hidden = api.get(f"/learnings/{correction.json()['id']}", {"user": "telegram:2"})
    assert hidden.status_code == 404


def _files(data: bytes) -> dict[str, str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {
            m.name: tar.extractfile(m).read().decode()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def test_a_users_export_holds_their_memory_alone(api):
    ann = _session(api, "ann", "telegram:1")
    bo = _session(api, "bo", "telegram:2")
    _append(api, ann["id"], "Ann here, I love Lisbon.")
    _append(api, bo["id"], "Bo here, I love Zanzibar.")
    api.post("/memory/save", {"content": "Ann is vegetarian", "session_id": ann["id"]})
    api.post("/memory/save", {"content": "Bo plays the cello", "session_id": bo["id"]})
    api.post("/entries", {"name": "notes/ann.md", "content": "ann note", "user": "telegram:1"})
    api.post("/entries", {"name": "SOUL.md", "content": "agent soul"})

    response = api.get("/workspace/export", {"user": "telegram:1"})
    assert response.status_code == 200
    files = _files(response.content)
    names = sorted(n for n in files if not n.startswith("memory/20"))
    assert names == [".memoryhub/manifest.json", ".memoryhub/user-data.json", "notes/ann.md"]
    data = json.loads(files[".memoryhub/user-data.json"])
    assert data["user"] == "telegram:1"
    assert [(s["key"], [m["content"] for m in s["messages"]]) for s in data["sessions"]] == [
        ("ann", ["Ann here, I love Lisbon."])
    ]
    assert [f["value"] for f in data["facts"]] == ["Ann is vegetarian"]
    assert data["facts"][0]["versions"][0]["new_value"] == "Ann is vegetarian"
    everything = "".join(files.values())
    assert "Zanzibar" not in everything
    assert "cello" not in everything
    assert "agent soul" not in everything

    agents = _files(api.get("/workspace/export").content)
    assert "SOUL.md" in agents
    assert "notes/ann.md" not in agents


def test_facts_of_two_owners_are_never_merged(agent):
    ann = fact_save(agent=agent, content="Has a dog named Rex", user="telegram:1").fact
    shared = fact_save(agent=agent, content="Has a dog named Rex").fact
    with pytest.raises(Conflict, match="same user"):
        fact_merge(agent=agent, keep=shared, other=ann, changed_by="editor")
    assert Fact.objects.get(pk=ann.pk).valid_to is None
    assert Fact.objects.get(pk=ann.pk).versions.count() == 1


def test_the_agents_mcp_resources_hold_no_users_documents(api, agent):
    api.post("/entries", {"name": "MEMORY.md", "content": "agent memory"})
    api.post("/entries", {"name": "MEMORY.md", "content": "ann's memory", "user": "telegram:1"})
    api.post("/entries", {"name": "USER.md", "content": "bo's profile", "user": "telegram:2"})
    assert [r.name for r in resource_list(agent)] == ["MEMORY.md"]
    assert resource_read(agent, "memory://MEMORY.md") == "agent memory"
    with pytest.raises(NotFound):
        resource_read(agent, "memory://USER.md")


def test_a_users_memory_md_stays_with_the_agents_within_the_budget(api):
    api.post("/entries", {"name": "MEMORY.md", "content": "alpha " * 8})
    api.post("/entries", {"name": "MEMORY.md", "content": "beta " * 40, "user": "telegram:1"})
    api.post("/entries", {"name": "SOUL.md", "content": "gamma " * 8})
    session = _session(api, "s1", "telegram:1")
    context = api.post("/context", {"session_id": session["id"], "max_tokens": 20}).json()
    parts = {p["name"]: p for p in context["system"]["parts"]}
    # Both MEMORY.md stay (the user's cut to the room the agent's left); SOUL.md goes.
    assert list(parts) == ["MEMORY.md", "users/telegram:1/MEMORY.md"]
    assert (parts["MEMORY.md"]["tokens"], parts["MEMORY.md"]["truncated"]) == (8, False)
    own = parts["users/telegram:1/MEMORY.md"]
    assert (own["tokens"], own["truncated"]) == (12, True)
    assert context["tokens"]["total"] == 20
    assert context["warnings"] == [
        "users/telegram:1/MEMORY.md is 40 tokens, over the 12-token budget: truncated to 12 tokens"
    ]
