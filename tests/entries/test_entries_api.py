"""Seed 003's entry operations through the API: Add, Rename, Alias, Write, Remove."""

import pytest

from apps.entries.models import Entry, EntryAlias, EntryChange
from apps.entries.services import entry_add

pytestmark = pytest.mark.django_db


def add(api, name, content="", kind="note"):
    return api.post("/entries", {"name": name, "content": content, "kind": kind})


def test_add_returns_the_entry_with_a_monotonic_id(api, agent):
    # when
    first = add(api, "notes/todo.md", "buy milk")
    second = add(api, "MEMORY.md", "The user likes tea.")

    # then
    assert first.status_code == 201
    body = first.json()
    assert (body["name"], body["content"], body["kind"], body["aliases"]) == (
        "notes/todo.md",
        "buy milk",
        "note",
        [],
    )
    assert body["bytes"] == 8
    assert second.json()["id"] == body["id"] + 1


def test_add_with_a_taken_name_is_409_and_writes_nothing(api, agent):
    add(api, "plan.md", "v1")

    response = add(api, "plan.md", "v2")

    assert response.status_code == 409
    assert response.json()["detail"] == "the name 'plan.md' is taken by an entry"
    assert list(Entry.objects.filter(agent=agent).values_list("content", flat=True)) == ["v1"]


def test_add_with_a_name_held_as_an_alias_is_409(api, agent):
    add(api, "plan.md")
    api.post("/entries/plan.md/aliases", {"alias": "roadmap"})

    response = add(api, "roadmap")

    assert response.status_code == 409
    assert response.json()["detail"] == "the name 'roadmap' is taken by an alias"
    assert Entry.objects.filter(agent=agent).count() == 1


def test_reserved_documents_and_daily_logs_are_valid_names(api):
    for name in ["AGENTS.md", "SOUL.md", "USER.md", "MEMORY.md", "HEARTBEAT.md",
                 "memory/2026-01-31.md"]:  # fmt: skip
        assert add(api, name, f"# {name}\n").status_code == 201

    assert api.get("/entries/memory/2026-01-31.md").json()["content"] == (
        "# memory/2026-01-31.md\n"
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "name must not be empty"),
        ("   ", "name must not be empty"),
        ("x" * 201, "name is longer than 200 characters or 255 bytes"),
        ("é" * 128, "name is longer than 200 characters or 255 bytes"),
        ("/etc/passwd", "name must be a relative path (no leading '/')"),
        ("../secrets.md", "name must not contain '..'"),
        ("notes/../../x.md", "name must not contain '..'"),
        ("a..b", "name must not contain '..'"),
        ("bad\x00name", "name must not contain NUL characters"),  # the API-wide check
        ("two\nlines", "name must not contain NUL, newlines or control characters"),
        ("cr\rname", "name must not contain NUL, newlines or control characters"),
        ("back\\slash", "name must not contain a backslash"),
        ("notes//x.md", "name must not have empty or '.' path segments"),
        ("notes/", "name must not have empty or '.' path segments"),
        ("./x.md", "name must not have empty or '.' path segments"),
        (" padded", "name must not start or end with whitespace"),
        (".memoryhub/manifest.json", "names under '.memoryhub/' are reserved"),
        ("search", "'search' is reserved by the API"),
    ],
)
def test_unsafe_names_are_422_and_write_nothing(api, agent, name, message):
    response = add(api, name, "x")

    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"] == message
    assert response.json()["detail"][0]["loc"] == ["body", "name"]
    assert Entry.objects.filter(agent=agent).count() == 0


def test_a_name_cannot_be_both_a_file_and_a_folder(api, agent):
    add(api, "memory/2026-01-31.md")

    folder = add(api, "memory")
    inside = add(api, "memory/2026-01-31.md/x")

    assert folder.status_code == 409
    assert folder.json()["detail"] == (
        "the name 'memory' clashes with the path of entry 'memory/2026-01-31.md'"
    )
    assert inside.status_code == 409
    assert Entry.objects.filter(agent=agent).count() == 1


def test_content_with_nul_is_422(api, agent):
    response = add(api, "a.md", "bad\x00content")

    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"] == "content must not contain NUL characters"


def test_content_over_the_limit_is_413(api, agent):
    limit = agent.config.max_content_bytes

    response = add(api, "big.md", "x" * (limit + 1))

    assert response.status_code == 413
    assert response.json()["detail"] == f"content is {limit + 1} bytes; the limit is {limit}"
    assert Entry.objects.count() == 0


def test_get_resolves_a_name_or_an_alias(api):
    add(api, "people/ada.md", "Ada Lovelace")
    api.post("/entries/people/ada.md/aliases", {"alias": "ada"})

    by_name = api.get("/entries/people/ada.md").json()
    by_alias = api.get("/entries/ada").json()

    assert by_name == by_alias
    assert by_alias["aliases"] == ["ada"]


def test_unknown_name_is_404_for_every_operation(api):
    assert api.get("/entries/nope.md").status_code == 404
    assert api.client.put(
        "/api/v1/entries/nope.md", '{"content": "x"}', content_type="application/json",
        headers=api._headers(),
    ).status_code == 404  # fmt: skip
    assert api.patch("/entries/nope.md", {"name": "other.md"}).status_code == 404
    assert api.post("/entries/nope.md/aliases", {"alias": "n"}).status_code == 404
    response = api.delete("/entries/nope.md")
    assert response.status_code == 404
    assert response.json() == {"detail": "no entry named 'nope.md'"}


def put(api, name, body):
    import json

    return api.client.put(
        f"/api/v1/entries/{name}", json.dumps(body), content_type="application/json",
        headers=api._headers(),
    )  # fmt: skip


def test_write_replaces_content_through_an_alias(api, agent):
    add(api, "todo.md", "old")
    api.post("/entries/todo.md/aliases", {"alias": "tasks"})

    response = put(api, "tasks", {"content": "new"})

    assert response.status_code == 200
    assert response.json()["content"] == "new"
    assert Entry.objects.get(agent=agent, name="todo.md").content == "new"


def test_rename_keeps_id_aliases_and_content(api, agent):
    created = add(api, "draft.md", "text").json()
    api.post("/entries/draft.md/aliases", {"alias": "d"})

    response = api.patch("/entries/d", {"name": "final.md"})

    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["name"], body["aliases"], body["content"]) == (
        created["id"],
        "final.md",
        ["d"],
        "text",
    )
    assert api.get("/entries/draft.md").status_code == 404


def test_rename_to_a_name_held_as_an_alias_is_refused(api, agent):
    add(api, "a.md")
    add(api, "b.md")
    api.post("/entries/b.md/aliases", {"alias": "bee"})

    response = api.patch("/entries/a.md", {"name": "bee"})

    assert response.status_code == 409
    assert response.json()["detail"] == "the name 'bee' is taken by an alias"
    assert sorted(Entry.objects.filter(agent=agent).values_list("name", flat=True)) == [
        "a.md",
        "b.md",
    ]


def test_rename_to_a_taken_name_is_409(api):
    add(api, "a.md")
    add(api, "b.md")

    response = api.patch("/entries/a.md", {"name": "b.md"})

    assert response.status_code == 409
    assert response.json()["detail"] == "the name 'b.md' is taken by an entry"


def test_alias_may_not_collide_with_any_name_or_alias(api, agent):
    add(api, "a.md")
    add(api, "b.md")
    api.post("/entries/a.md/aliases", {"alias": "first"})

    with_name = api.post("/entries/a.md/aliases", {"alias": "b.md"})
    with_alias = api.post("/entries/b.md/aliases", {"alias": "first"})
    own_name = api.post("/entries/a.md/aliases", {"alias": "a.md"})

    assert [r.status_code for r in (with_name, with_alias, own_name)] == [409, 409, 409]
    assert with_name.json()["detail"] == "the name 'b.md' is taken by an entry"
    assert with_alias.json()["detail"] == "the name 'first' is taken by an alias"
    assert list(EntryAlias.objects.filter(agent=agent).values_list("name", flat=True)) == ["first"]


def test_alias_with_an_unsafe_name_is_422(api, agent):
    add(api, "a.md")

    response = api.post("/entries/a.md/aliases", {"alias": "../x"})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "alias"]
    assert EntryAlias.objects.count() == 0


def test_remove_deletes_the_entry_and_all_its_aliases(api, agent):
    add(api, "a.md", "x")
    api.post("/entries/a.md/aliases", {"alias": "one"})
    api.post("/entries/a.md/aliases", {"alias": "two"})

    response = api.delete("/entries/two")

    assert response.status_code == 204
    assert Entry.objects.filter(agent=agent).count() == 0
    assert EntryAlias.objects.filter(agent=agent).count() == 0
    # The freed names can be used again.
    assert add(api, "one").status_code == 201


def test_archive_writes_are_allowed_and_each_is_recorded_with_who_made_it(api, agent):
    """Seed 003 permits operations on archives; each one is logged, and a rename keeps the
    old name as an alias so compact markers still resolve."""
    entry_add(agent=agent, name="archive/chat-1/1", content="summary", kind="archive",
              changed_by="compaction")  # fmt: skip

    written = put(api, "archive/chat-1/1", {"content": "corrected summary"})
    renamed = api.patch("/entries/archive/chat-1/1", {"name": "archive/chat-1/first"})
    aliased = api.post("/entries/archive/chat-1/first/aliases", {"alias": "jan"})
    via_old_name = api.get("/entries/archive/chat-1/1")
    removed = api.delete("/entries/jan")

    assert (written.status_code, written.json()["content"]) == (200, "corrected summary")
    assert renamed.json()["aliases"] == ["archive/chat-1/1"]
    assert aliased.status_code == 201
    assert via_old_name.json()["name"] == "archive/chat-1/first"
    assert removed.status_code == 204
    assert not Entry.objects.filter(agent=agent).exists()
    changes = list(
        EntryChange.objects.filter(agent=agent).values_list(
            "entry_name", "kind", "action", "changed_by", "previous_content", "detail"
        )
    )
    assert changes == [
        ("archive/chat-1/1", "archive", "add", "compaction", "", ""),
        ("archive/chat-1/1", "archive", "write", "agent", "summary", ""),
        ("archive/chat-1/first", "archive", "rename", "agent", "", "renamed from archive/chat-1/1"),
        ("archive/chat-1/first", "archive", "alias", "agent", "", "alias jan"),
        ("archive/chat-1/first", "archive", "remove", "agent", "corrected summary",
         "aliases: archive/chat-1/1, jan"),
    ]  # fmt: skip


def test_history_and_learnings_files_are_generated_not_entry_names(api):
    for name in ["memory/HISTORY.md", "memory/HISTORY-2026-01.md"]:
        response = add(api, name, "x")
        assert response.status_code == 422
        assert response.json()["detail"][0]["msg"] == (
            f"'{name}' is generated by consolidation and read-only"
        )
    for name in ["learnings/errors.md", "learnings/corrections.md"]:
        response = add(api, name, "x")
        assert response.status_code == 422
        assert response.json()["detail"][0]["msg"] == (
            f"'{name}' is generated from learnings: use /learnings"
        )


def test_list_is_in_id_order_with_a_cursor(api):
    for name in ["c.md", "a.md", "b.md"]:
        add(api, name)

    first = api.get("/entries", {"limit": 2}).json()
    rest = api.get("/entries", {"limit": 2, "cursor": first["next_cursor"]}).json()

    assert [e["name"] for e in first["items"]] == ["c.md", "a.md"]
    assert [e["name"] for e in rest["items"]] == ["b.md"]
    assert rest["next_cursor"] is None


def test_list_by_prefix_with_content(api):
    for name, content in [("store/a/k.json", "{}"), ("store/b.json", "[]"), ("storex.md", "x"),
                          ("notes/store/c.md", "y")]:  # fmt: skip
        add(api, name, content)

    with_content = api.get("/entries", {"prefix": "store/", "content": "true"}).json()
    without = api.get("/entries", {"prefix": "store/"}).json()

    assert [(e["name"], e["content"]) for e in with_content["items"]] == [
        ("store/a/k.json", "{}"),
        ("store/b.json", "[]"),
    ]
    assert [(e["name"], e["content"]) for e in without["items"]] == [
        ("store/a/k.json", None),
        ("store/b.json", None),
    ]
    # A prefix is a plain start of the name: LIKE's wildcards match only themselves.
    assert api.get("/entries", {"prefix": "stor_/"}).json()["items"] == []
    assert api.get("/entries", {"prefix": "x" * 256}).status_code == 422


def test_write_with_create_adds_a_missing_entry_and_writes_an_existing_one(api, agent):
    created = put(api, "items/k.json", {"content": "v1", "create": True})
    written = put(api, "items/k.json", {"content": "v2", "create": True})
    missing = put(api, "items/other.json", {"content": "v1"})
    unsafe = put(api, "../x.json", {"content": "v1", "create": True})

    assert (created.status_code, created.json()["content"], created.json()["kind"]) == (
        200,
        "v1",
        "note",
    )
    assert (written.status_code, written.json()["id"]) == (200, created.json()["id"])
    assert missing.status_code == 404
    assert unsafe.status_code == 422
    entry = Entry.objects.get(agent=agent)
    assert (entry.name, entry.content) == ("items/k.json", "v2")
    actions = (
        EntryChange.objects.filter(agent=agent)
        .order_by("id")
        .values_list("action", "previous_content")
    )
    assert list(actions) == [("add", ""), ("write", "v1")]


def test_write_with_create_and_index_false_adds_an_unindexed_entry(api, agent):
    response = put(api, "items/hidden.json", {"content": "zebra", "create": True, "index": False})

    assert response.json()["index"] is False
    assert api.get("/entries/search", {"q": "zebra"}).json()["items"] == []


def test_memory_md_past_8192_bytes_is_flagged_for_compression(api, agent):
    add(api, "MEMORY.md", "x" * 8192)
    assert api.get("/entries/MEMORY.md").json()["needs_compression"] is False

    response = put(api, "MEMORY.md", {"content": "x" * 8193})

    assert response.json()["needs_compression"] is True
    assert put(api, "MEMORY.md", {"content": "short"}).json()["needs_compression"] is False


def test_another_agents_key_gets_404_and_changes_nothing(api, other_api, agent):
    add(api, "secret.md", "mine")
    api.post("/entries/secret.md/aliases", {"alias": "s"})

    responses = [
        other_api.get("/entries/secret.md"),
        other_api.get("/entries/s"),
        put(other_api, "secret.md", {"content": "theirs"}),
        other_api.patch("/entries/secret.md", {"name": "x.md"}),
        other_api.post("/entries/secret.md/aliases", {"alias": "y"}),
        other_api.delete("/entries/secret.md"),
    ]

    assert [r.status_code for r in responses] == [404] * 6
    assert other_api.get("/entries").json() == {"items": [], "next_cursor": None}
    entry = Entry.objects.get(agent=agent)
    assert (entry.name, entry.content) == ("secret.md", "mine")
    assert list(EntryAlias.objects.values_list("name", flat=True)) == ["s"]
    # The other agent has its own namespace: the same name is free for it.
    assert add(other_api, "secret.md", "theirs").status_code == 201
