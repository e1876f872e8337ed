"""Issue 39, "Erasure is complete": after DELETE /users/{user} no table holds a string of the
user: not their rows, not the agent's rows that came from their sessions (which stay without
the link), not the audit events about their rows (which stay without their content), not the
erasure's own event (a keyed hash instead of the name). With `?vacuum=true` none of the
strings is left in the SQLite file's bytes either.

The user has a session with messages (one popped), a fact edited on the review page, a note
edited in the admin, and the agent keeps a fact saved in their session. Committed for real
(transaction=True): VACUUM cannot run in a transaction, and the file is read from disk."""

import sqlite3
from io import StringIO
from pathlib import Path
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from apps.agents.models import AuditEvent, MemberRole
from apps.agents.services import audit_record, membership_set
from apps.facts.models import Fact
from apps.learnings.models import Learning
from apps.people.selectors import user_erasures
from apps.people.services import erasure_vacuum
from apps.people.services.erasure_audit import user_hmac
from tests.support.dump import file_bytes_with, tables_with
from tests.users.world import ok

pytestmark = pytest.mark.django_db(transaction=True)

USER = "signal:Zoltan-Quist"
KEY = "zq-kumquat-chat"
MESSAGES = ("I keep a glumtrix in my garden.", "My neighbour hates the glumtrix.")
FACT = "Zoltan breeds vorplax"
EDITED = "Zoltan breeds vorplax and hobnarz"  # on the review page
NOTE = "Zoltan hides the zimbardok key."
NOTE_EDITED = "Zoltan hides the zimbardok key under the snorkwump."  # in the admin
AGENT_FACT = "Parcels leave the depot at noon"  # the agent's, saved in their session
AGENT_LEARNING = "Confirm the depot before promising a time."  # the agent's, from their session
# Every string of theirs (words the porter stemmer keeps whole, as FTS5 stores them).
THEIRS = [USER, KEY, "glumtrix", "vorplax", "hobnarz", "zimbardok", "snorkwump"]
# What the erasure answers for this user (checked against the rows in the first test).
DELETED = {
    "sessions": 1,
    "messages": 3,  # four appended, one popped
    "summaries": 0,
    "facts": 1,
    "fact_versions": 2,  # saved, edited on the review page
    "entries": 2,  # the note, and their daily log the saved fact went to
    "entry_aliases": 0,
    "entry_changes": 1,  # the note's add (the admin's edit and a log's lines keep none)
    "learnings": 0,
    "history": 0,
    "runs": 0,
    "error_details": 0,  # no tool of theirs failed (tests/learnings/test_person_safe_errors.py)
    # the agent's fact from their session, and the audit snapshot that named the session
    "provenance_cleared": 2,
    # the review edit of their fact, the admin edit of their note, the pop of their message
    "audit_events_cleared": 3,
}


def _person(username: str, agent, *, superuser: bool = False) -> Client:
    model = get_user_model()
    if superuser:
        person = model.objects.create_superuser(username, f"{username}@example.com", "pw")
    else:
        person = model.objects.create_user(username=username, password="pw")
        membership_set(team=agent.team, user=person, role=MemberRole.EDITOR)
    client = Client()
    client.force_login(person)
    return client


def _their_memory(api, agent) -> dict:
    """The user's memory, made as an agent and two people make it; the ids of what the
    erasure deletes or keeps."""
    session = ok(api.post("/sessions", {"key": KEY, "user": USER}), 201)
    chat = [
        {"role": role, "content": text}
        for m in MESSAGES
        for role, text in (("user", m), ("assistant", "Noted."))
    ]
    ok(api.post(f"/sessions/{KEY}/messages", {"messages": chat}), 201)
    ok(api.post(f"/sessions/{KEY}/messages/pop"))  # the API's audit event names the user
    fact = ok(api.post("/memory/save", {"content": FACT, "session_id": KEY}))["fact"]
    shared = ok(api.post("/memory/save", {"content": AGENT_FACT, "session_id": KEY,
                                          "scope": "agent"}))["fact"]  # fmt: skip
    note = ok(api.post("/entries", {"name": "notes/zq.md", "content": NOTE, "user": USER}), 201)
    assert (fact["user"], shared["user"]) == (USER, None)  # None: the agent's own

    edit = reverse("review:fact_edit", args=[agent.slug, fact["id"]])
    form = {"value": EDITED, "category": fact["category"], "key": fact["key"], "importance": "0.5"}
    assert _person("eddie", agent).post(edit, form).status_code == 302
    admin = {"content": NOTE_EDITED, "aliases-TOTAL_FORMS": "0", "aliases-INITIAL_FORMS": "0",
             "aliases-MIN_NUM_FORMS": "0", "aliases-MAX_NUM_FORMS": "1000"}  # fmt: skip
    root = _person("root", agent, superuser=True)
    assert root.post(f"/admin/entries/entry/{note['id']}/change/", admin).status_code == 302
    # A snapshot of the agent's fact that names the session it came from (a review page's).
    audit_record(
        user=get_user_model().objects.get(username="eddie"),
        agent=agent,
        source="review",
        action="fact.update",
        target=Fact.objects.get(pk=shared["id"]),
        before={"value": AGENT_FACT, "session": session["id"], "session_key": KEY},
        after={"value": AGENT_FACT, "session": None, "session_key": KEY},
    )
    return {"session": session["id"], "fact": fact["id"], "shared": shared["id"]}


def _found(where: dict[str, list[str]]) -> set[str]:
    return {s for strings in where.values() for s in strings}


def _erase(api, user: str = USER, query: str = ""):
    return api.delete(f"/users/{quote(user, safe='')}{query}")


def _events(agent) -> list[tuple]:
    rows = AuditEvent.objects.filter(agent=agent).exclude(action="user.erase").order_by("id")
    return list(rows.values_list("username", "action", "object_type", "before", "after"))


def test_after_an_erasure_no_table_holds_a_string_of_the_user(api, agent):
    ids = _their_memory(api, agent)
    assert _found(tables_with(THEIRS)) == set(THEIRS)  # the scan finds them

    response = _erase(api, query="?vacuum=true")

    assert response.status_code == 200, response.content
    assert response.json() == {"user": USER, "deleted": DELETED, "vacuumed": True}
    assert tables_with(THEIRS) == {}
    # The agent's fact stays, without the session; the events stay, without their content.
    assert list(Fact.objects.filter(pk=ids["shared"]).values_list("value", "session")) == [
        (AGENT_FACT, None)
    ]
    erased = {"erased": True}
    assert _events(agent) == [
        ("agent", "message.pop", "message", erased, None),
        ("eddie", "fact.update", "fact", erased, erased),
        ("root", "entry.update", "entry", erased, erased),
        ("eddie", "fact.update", "fact",
         {"value": AGENT_FACT, "session": None, "session_key": None},
         {"value": AGENT_FACT, "session": None, "session_key": None}),
    ]  # fmt: skip
    [event] = AuditEvent.objects.filter(agent=agent, action="user.erase")
    assert event.before == {"user_hmac": user_hmac(agent_id=agent.pk, user=USER), **DELETED}
    assert user_erasures(agent=agent, user=USER) == [event]


def test_the_agents_learning_from_their_session_stays_without_the_session(api, agent):
    ok(api.post("/sessions", {"key": KEY, "user": USER}), 201)
    learning = {"kind": "correction", "content": AGENT_LEARNING, "session_id": KEY,
                "scope": "agent"}  # fmt: skip
    made = ok(api.post("/learnings", learning), 201)
    assert made["user"] is None  # the agent's
    assert tables_with([KEY]) != {}

    assert _erase(api).status_code == 200

    kept = Learning.objects.get(pk=made["id"])
    assert (kept.content, kept.session_id) == (AGENT_LEARNING, None)
    assert tables_with(THEIRS) == {}


@pytest.mark.sqlite
def test_with_vacuum_no_string_of_the_user_is_left_in_the_sqlite_files(api, agent):
    _their_memory(api, agent)

    assert _erase(api, query="?vacuum=true").json()["vacuumed"] is True

    assert file_bytes_with(THEIRS) == {}
    wal = Path(connection.settings_dict["NAME"] + "-wal")
    assert wal.read_bytes() == b""  # checkpointed and truncated


@pytest.mark.sqlite
def test_without_vacuum_the_files_still_hold_the_deleted_bytes(api, agent):
    # What shows that the test above reads the right files: the strings are there before,
    # and an erasure without vacuum leaves the tables clean and the bytes on disk.
    _their_memory(api, agent)
    assert _found(file_bytes_with(THEIRS)) == set(THEIRS)

    response = _erase(api)

    assert response.json()["vacuumed"] is False
    assert tables_with(THEIRS) == {}
    assert file_bytes_with(THEIRS) != {}


@pytest.mark.postgres
def test_with_vacuum_postgresql_vacuums_the_touched_tables(api, agent):
    _their_memory(api, agent)
    counts = _vacuum_counts(["conversations_message", "facts_fact", "agents_auditevent"])

    response = _erase(api, query="?vacuum=true")

    assert response.json() == {"user": USER, "deleted": DELETED, "vacuumed": True}
    after = _vacuum_counts(list(counts))
    assert {t: after[t] - n for t, n in counts.items()} == dict.fromkeys(counts, 1)


def _vacuum_counts(tables: list[str]) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT relname, vacuum_count FROM pg_stat_user_tables WHERE relname = ANY(%s)",
            [tables],
        )
        return dict(cursor.fetchall())


def test_vacuum_that_is_not_a_boolean_is_422_and_erases_nothing(api, agent):
    _their_memory(api, agent)

    response = _erase(api, query="?vacuum=notabool")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "vacuum"]
    assert tables_with([KEY]) != {}
    assert not AuditEvent.objects.filter(action="user.erase").exists()


def test_erasing_a_user_with_nothing_left_answers_zeros_and_still_vacuums(api, agent):
    response = _erase(api, "signal:nobody", "?vacuum=true")

    assert response.status_code == 200
    assert response.json() == {
        "user": "signal:nobody",
        "deleted": dict.fromkeys(DELETED, 0),
        "vacuumed": True,
    }


def test_manage_py_erase_user_vacuums_and_checks_for_an_erasure(api, agent):
    _their_memory(api, agent)
    checked = StringIO()
    call_command("erase_user", "--agent", agent.slug, "--check", USER, stdout=checked)
    assert checked.getvalue() == (
        f"No erasure of user '{USER}' of agent 'alice-bot' is recorded.\n"
    )
    assert tables_with([KEY]) != {}  # --check erased nothing
    out = StringIO()

    call_command("erase_user", "--agent", agent.slug, "--vacuum", USER, stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0] == f"Erased user '{USER}' of agent 'alice-bot':"
    assert lines[1:-1] == [f"  {kind}: {n}" for kind, n in DELETED.items()]
    assert lines[-1] == "Vacuumed."
    assert tables_with(THEIRS) == {}
    [event] = AuditEvent.objects.filter(action="user.erase")
    again = StringIO()
    call_command("erase_user", "--agent", agent.slug, "--check", USER, stdout=again)
    assert again.getvalue().splitlines() == [
        f"User '{USER}' of agent 'alice-bot' was erased:",
        f"  {event.created_at.isoformat()} by {event.username}",
    ]
    other = StringIO()
    call_command("erase_user", "--agent", agent.slug, "--check", "signal:other", stdout=other)
    assert "No erasure of user 'signal:other'" in other.getvalue()


def test_the_review_pages_erase_with_the_vacuum_box_ticked(api, agent):
    _their_memory(api, agent)
    editor = Client()
    editor.force_login(get_user_model().objects.get(username="eddie"))
    url = reverse("review:user_erase", args=[agent.slug, USER])
    page = editor.get(url).content.decode()
    assert '<input type="checkbox" name="vacuum">' in page
    # The confirmation counts what would be deleted; what is cleared comes with the erasure.
    assert "provenance" not in page

    response = editor.post(url, {"vacuum": "on"})

    assert response.status_code == 302
    assert tables_with(THEIRS) == {}
    users = editor.get(response["Location"]).content.decode()
    assert "provenance cleared 2, audit events cleared 3; vacuumed." in users
    if connection.vendor == "sqlite":
        assert file_bytes_with(THEIRS) == {}


@pytest.fixture
def impatient():
    """SQLite gives up on a lock after 0.1 s instead of the 20 s busy timeout."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        (was,) = cursor.fetchone()
        cursor.execute("PRAGMA busy_timeout = 100")
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA busy_timeout = {int(was)}")


@pytest.mark.sqlite
@pytest.mark.parametrize("held", ["BEGIN IMMEDIATE", "BEGIN"])
def test_a_vacuum_another_connection_holds_up_answers_false(api, agent, impatient, held):
    # BEGIN IMMEDIATE: another writer, VACUUM cannot start; BEGIN and a read: a reader
    # keeps its snapshot of the WAL, which the checkpoint cannot truncate.
    _their_memory(api, agent)
    assert _erase(api).status_code == 200
    other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    try:
        other.execute(held)
        other.execute("SELECT count(*) FROM conversations_session").fetchone()

        assert erasure_vacuum() is False
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert file_bytes_with(THEIRS) != {}  # what a vacuum would have cleared is still there
    assert erasure_vacuum() is True  # and is, once the other connection has let go
    assert file_bytes_with(THEIRS) == {}
