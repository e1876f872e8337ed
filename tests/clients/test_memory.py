"""Entries, the memory tools and facts through the client, on both hubs, against the live
server."""

from memoryhub_client import Entry, Fact
from memoryhub_client.models import (
    Alias,
    EntrySearchResult,
    EntrySummary,
    FactSaveResult,
    FactVersion,
    MemorySearchResult,
    RecallResult,
    SaveResult,
)

from tests.clients.conftest import collect, settle


def test_entries_from_add_to_delete(run):
    async def scenario(hub):
        added = await settle(hub.entries.add("notes/todo", "buy milk"))
        written = await settle(hub.entries.write("notes/todo", "buy oat milk"))
        got = await settle(hub.entries.get("notes/todo"))
        found = await settle(hub.entries.search("oat", limit=5))
        renamed = await settle(hub.entries.rename("notes/todo", "notes/shopping"))
        alias = await settle(hub.entries.alias("notes/shopping", "list"))
        by_alias = await settle(hub.entries.get("list"))
        for n in range(3):
            await settle(hub.entries.add(f"log/{n}", f"day {n}", kind="archive"))
        every = await collect(hub.entries.list(limit=2))  # 4 entries: two pages
        archives = await collect(hub.entries.list(kind="archive", limit=1))
        await settle(hub.entries.delete("notes/shopping"))
        return (
            added,
            written,
            got,
            found,
            renamed,
            alias,
            by_alias,
            every,
            archives,
            await collect(hub.entries.list()),
        )

    added, written, got, found, renamed, alias, by_alias, every, archives, after = run(scenario)

    assert isinstance(added, Entry)
    assert (added.name, added.kind, added.content, added.bytes, added.aliases) == (
        "notes/todo",
        "note",
        "buy milk",
        8,
        [],
    )
    assert (written.id, written.content, written.bytes) == (added.id, "buy oat milk", 12)
    assert got == written
    assert isinstance(found, EntrySearchResult)
    assert [h.entry.name for h in found.items] == ["notes/todo"]
    assert (renamed.id, renamed.name) == (added.id, "notes/shopping")
    assert isinstance(alias, Alias)
    assert (alias.alias, alias.entry.name, alias.entry.aliases) == (
        "list",
        "notes/shopping",
        ["list"],
    )
    assert (by_alias.id, by_alias.content) == (added.id, "buy oat milk")
    assert all(isinstance(e, EntrySummary) for e in every)
    assert [e.name for e in every] == ["notes/shopping", "log/0", "log/1", "log/2"]
    assert [e.name for e in archives] == ["log/0", "log/1", "log/2"]
    assert [e.name for e in after] == ["log/0", "log/1", "log/2"]


def test_memory_save_recall_and_search(run):
    async def scenario(hub):
        saved = await settle(
            hub.memory.save("The user lives in Lisbon", key="home", category="profile")
        )
        again = await settle(hub.memory.save("The user lives in Lisbon", category="profile"))
        recalled = await settle(hub.memory.recall("Lisbon", k=3))
        searched = await settle(hub.memory.search("Lisbon", k=5))
        return saved, again, recalled, searched

    saved, again, recalled, searched = run(scenario)

    assert isinstance(saved, SaveResult)
    assert (saved.action, saved.deduped, saved.fact.key, saved.fact.category) == (
        "created",
        False,
        "home",
        "profile",
    )
    assert saved.log == f"memory/{saved.fact.created_at:%Y-%m-%d}.md"  # today's log
    assert (again.deduped, again.existing_id, again.fact.id) == (True, saved.fact.id, saved.fact.id)
    assert isinstance(recalled, RecallResult)
    assert [h.fact.value for h in recalled.items] == ["The user lives in Lisbon"]
    assert isinstance(searched, MemorySearchResult)
    # The day's log records both saves and, an entry, has a vector too (issue 41): it names
    # Lisbon more often than the fact, and ranks first by both legs.
    assert [(h.source, h.name) for h in searched.items] == [
        ("document", saved.log),
        ("fact", "profile/home"),
    ]


def test_facts_from_create_to_delete(run):
    async def scenario(hub):
        created = await settle(
            hub.facts.create("The user is vegetarian", key="diet", category="food")
        )
        fact_id = created.fact.id
        got = await settle(hub.facts.get(fact_id))
        updated = await settle(
            hub.facts.update(fact_id, value="The user is vegan", reason="said so")
        )
        newer = await settle(hub.facts.supersede(fact_id, "The user eats fish", reason="changed"))
        versions = await settle(hub.facts.versions(fact_id))
        for n in range(3):
            await settle(hub.facts.create(f"Fact number {n}", key=f"k{n}", category="misc"))
        current = await collect(hub.facts.list(limit=2))
        every = await collect(hub.facts.list(include_superseded=True, category="food", limit=1))
        await settle(hub.facts.delete(newer.id))
        return (
            created,
            got,
            updated,
            newer,
            versions,
            current,
            every,
            await collect(hub.facts.list(category="food")),
        )

    created, got, updated, newer, versions, current, every, after = run(scenario)

    assert isinstance(created, FactSaveResult)
    assert (created.action, created.fact.value, created.fact.source) == (
        "created",
        "The user is vegetarian",
        "agent",
    )
    assert isinstance(got, Fact)
    assert got.id == created.fact.id
    assert (updated.id, updated.value) == (got.id, "The user is vegan")
    assert (newer.key, newer.value, newer.status) == ("diet", "The user eats fish", "active")
    assert all(isinstance(v, FactVersion) for v in versions)
    assert [(v.number, v.old_value, v.new_value, v.reason) for v in versions] == [
        (1, "", "The user is vegetarian", "created"),
        (2, "The user is vegetarian", "The user is vegan", "said so"),
        (3, "The user is vegan", "The user eats fish", "changed"),
    ]
    assert [f.value for f in current] == [
        "The user eats fish",
        "Fact number 0",
        "Fact number 1",
        "Fact number 2",
    ]
    assert [(f.value, f.superseded_by) for f in every] == [
        ("The user is vegan", newer.id),
        ("The user eats fish", None),
    ]
    assert after == []
