"""Error memory, learnings, runs, HISTORY, end users, the agent and the workspace archive
through the client, on both hubs, against the live server."""

import io
import tarfile

from memoryhub_client.models import (
    Agent,
    AgentUser,
    ErrorRecord,
    ErrorSearchResult,
    HistoryEntry,
    HistoryFile,
    ImportResult,
    Learning,
    Run,
    RunDetail,
    TeamDocument,
    UserErase,
)

from tests.clients.conftest import collect, settle


def test_errors_from_remember_to_delete(run):
    async def scenario(hub):
        first = await settle(
            hub.errors.remember("book", "timeout after 30s", arguments={"place": "Nopa"})
        )
        for error in ("card declined", "insufficient funds"):
            await settle(hub.errors.remember("pay", error, outcome="failed"))
        found = await settle(hub.errors.search("timeout", tool_name="book", k=3))
        updated = await settle(
            hub.errors.update(first.id, outcome="resolved", resolution="retry with 60s")
        )
        got = await settle(hub.errors.get(first.id))
        learning = await settle(hub.errors.promote(first.id))
        every = await collect(hub.errors.list(limit=2))
        failed = await collect(hub.errors.list(tool_name="pay", outcome="failed", limit=1))
        await settle(hub.errors.delete(first.id))
        return (
            first,
            found,
            updated,
            got,
            learning,
            every,
            failed,
            await collect(hub.errors.list(tool_name="book")),
        )

    first, found, updated, got, learning, every, failed, after = run(scenario)

    assert isinstance(first, ErrorRecord)
    assert (first.tool_name, first.error, first.arguments, first.outcome) == (
        "book",
        "timeout after 30s",
        {"place": "Nopa"},
        "open",
    )
    assert isinstance(found, ErrorSearchResult)
    assert [h.record.id for h in found.items] == [first.id]
    assert (updated.outcome, updated.resolution) == ("resolved", "retry with 60s")
    assert got == updated
    assert isinstance(learning, Learning)
    assert (learning.kind, learning.error_record_id, learning.content) == (
        "error",
        first.id,
        'book failed with "timeout after 30s"; apply: retry with 60s',
    )
    assert sorted(e.error for e in every) == [
        "card declined",
        "insufficient funds",
        "timeout after 30s",
    ]
    assert sorted(e.error for e in failed) == ["card declined", "insufficient funds"]
    assert after == []


def test_learnings_from_add_to_delete(run):
    async def scenario(hub):
        added = await settle(hub.learnings.add("Always confirm the time", "correction"))
        for n in range(2):
            await settle(hub.learnings.add(f"Lesson {n}", "correction", user="u1"))
        got = await settle(hub.learnings.get(added.id))
        updated = await settle(hub.learnings.update(added.id, status="archived"))
        every = await collect(hub.learnings.list(all_users=True, limit=1))
        of_u1 = await collect(hub.learnings.list(user="u1", kind="correction", limit=1))
        archived = await collect(hub.learnings.list(status="archived"))
        await settle(hub.learnings.delete(added.id))
        return (
            added,
            got,
            updated,
            every,
            of_u1,
            archived,
            await collect(hub.learnings.list(status="archived")),
        )

    added, got, updated, every, of_u1, archived, after = run(scenario)

    assert isinstance(added, Learning)
    assert (added.kind, added.content, added.status, added.user) == (
        "correction",
        "Always confirm the time",
        "active",
        None,
    )
    assert got == added
    assert (updated.id, updated.status) == (added.id, "archived")
    assert [item.content for item in every] == ["Lesson 1", "Lesson 0", "Always confirm the time"]
    assert [(item.content, item.user) for item in of_u1] == [
        ("Lesson 1", "u1"),
        ("Lesson 0", "u1"),
        ("Always confirm the time", None),  # a user sees the agent's own too
    ]
    assert [item.id for item in archived] == [added.id]
    assert after == []


def test_runs_and_history(run):
    async def scenario(hub):
        for n in range(2):
            await settle(hub.sessions.create(key=f"chat-{n}", user="u1"))
            await settle(
                hub.messages.append(f"chat-{n}", [{"role": "user", "content": f"I like jazz {n}"}])
            )
            await settle(hub.sessions.consolidate(f"chat-{n}"))
        runs = await collect(hub.runs.list(all_users=True, limit=1))
        of_chat_0 = await collect(
            hub.runs.list(session_id="chat-0", kind="consolidate", status="fallback")
        )
        detail = await settle(hub.runs.get(runs[0].id, user="u1"))
        entries = await collect(hub.history.list(all_users=True, limit=1))
        jazz_1 = await collect(hub.history.list(q="jazz 1", user="u1"))
        of_chat_0_history = await collect(hub.history.list(session_id="chat-0"))
        month = entries[0].created_at.strftime("%Y-%m")
        this_month = await collect(hub.history.list(month=month, all_users=True))
        document = await settle(hub.history.file("memory/HISTORY.md", user="u1"))
        return runs, of_chat_0, detail, entries, jazz_1, of_chat_0_history, this_month, document

    runs, of_chat_0, detail, entries, jazz_1, of_chat_0_history, this_month, document = run(
        scenario
    )

    assert all(isinstance(r, Run) for r in runs)
    assert [(r.kind, r.session_key) for r in runs] == [
        ("consolidate", "chat-1"),
        ("consolidate", "chat-0"),
    ]
    assert [r.id for r in of_chat_0] == [runs[1].id]
    assert isinstance(detail, RunDetail)
    assert (detail.id, detail.kind, detail.fact_ids) == (runs[0].id, "consolidate", [])
    assert all(isinstance(e, HistoryEntry) for e in entries)
    assert [e.session_key for e in entries] == ["chat-1", "chat-0"]
    assert [e.id for e in jazz_1] == [entries[0].id]
    assert [e.id for e in of_chat_0_history] == [entries[1].id]
    assert [e.id for e in this_month] == [e.id for e in entries]
    assert isinstance(document, HistoryFile)
    assert document.name == "memory/HISTORY.md"
    assert "user: I like jazz 0" in document.content
    assert "user: I like jazz 1" in document.content
    assert document.bytes == len(document.content.encode())


def test_agent_settings_and_team_document(run):
    async def scenario(hub):
        before = await settle(hub.agent.get())
        after = await settle(hub.agent.update_settings({"recall_k": 7}))
        team = await settle(hub.agent.team_agents_md())
        return before, after, team

    before, after, team = run(scenario)

    assert isinstance(before, Agent)
    assert (before.slug, before.overrides, before.settings["recall_k"]) == ("alice-bot", {}, 5)
    assert (after.overrides, after.settings["recall_k"]) == ({"recall_k": 7}, 7)
    assert isinstance(team, TeamDocument)
    assert (team.team, team.name, team.content) == (before.team, "team/AGENTS.md", "")


def test_users_are_listed_and_erased(run):
    async def scenario(hub):
        for user in ("telegram:42", "u1", "u2"):
            await settle(hub.sessions.create(key=f"chat-{user.replace(':', '-')}", user=user))
        await settle(hub.messages.append("chat-telegram-42", [{"role": "user", "content": "hi"}]))
        users = await collect(hub.users.list(limit=2))
        erased = await settle(hub.users.erase("telegram:42"))
        return users, erased, await collect(hub.users.list())

    users, erased, after = run(scenario)

    assert all(isinstance(u, AgentUser) for u in users)
    assert [(u.user, u.sessions) for u in users] == [("telegram:42", 1), ("u1", 1), ("u2", 1)]
    assert isinstance(erased, UserErase)
    assert (erased.user, erased.deleted.sessions, erased.deleted.messages) == ("telegram:42", 1, 1)
    assert [u.user for u in after] == ["u1", "u2"]


def test_the_workspace_goes_out_and_back_in(run):
    async def scenario(hub):
        await settle(hub.entries.add("notes/todo", "buy milk"))
        archive = await settle(hub.workspace.export())
        await settle(hub.entries.delete("notes/todo"))
        loaded = await settle(hub.workspace.import_(archive))
        again = await settle(hub.workspace.import_(archive, force=True))
        return archive, loaded, again, await settle(hub.entries.get("notes/todo"))

    archive, loaded, again, entry = run(scenario)

    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        names = tar.getnames()
    assert names == [".memoryhub", ".memoryhub/manifest.json", "notes", "notes/todo"]
    assert isinstance(loaded, ImportResult)
    assert (loaded.created, loaded.overwritten, loaded.names) == (1, 0, ["notes/todo"])
    assert (again.created, again.overwritten) == (0, 1)
    assert entry.content == "buy milk"
