"""Issue 26's erasure from each entry point: who may not be erased (the agent, a blank
user: 422), what another agent's key can reach (nothing of this agent), GET /users to find
whom to erase, `manage.py erase_user`, and the cached window that goes with a session."""

from io import StringIO
from urllib.parse import quote

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from apps.agents.models import AuditEvent
from apps.conversations import working_memory
from apps.conversations.models import Message, Session
from apps.core.errors import InvalidInput
from apps.entries.models import Entry
from apps.entries.services import entry_archive_add
from apps.facts.models import Fact
from apps.lifecycle.models import HistoryEntry, Run
from apps.people.selectors import user_erasures
from apps.people.services import Actor, erasure_vacuum, user_erase
from apps.people.services.erasure_audit import user_hmac
from tests.people.erasure_seed import Owner, seed

pytestmark = pytest.mark.django_db

ERASED = "telegram:42"
KEPT = "mail:bob@example.com"


@pytest.fixture
def owners(api):
    return (
        seed(api, Owner("", "albatross", "own")),
        seed(api, Owner(ERASED, "zanzibar", "tg42")),
        seed(api, Owner(KEPT, "quokka", "bob")),
    )


def _rows(agent) -> dict:
    return {
        "sessions": Session.objects.filter(agent=agent).count(),
        "messages": Message.objects.filter(agent=agent).count(),
    }


@pytest.mark.parametrize("user", [" ", "%20%20", "%09", "a%07b"])
def test_a_blank_user_or_control_characters_are_422_and_nothing_is_erased(api, agent, owners, user):
    before = _rows(agent)

    response = api.delete(f"/users/{user}")

    assert response.status_code == 422
    assert response.json() == {
        "detail": [
            {
                "loc": ["path", "user"],
                "msg": "user must be 1-200 printable characters",
                "type": "value_error",
            }
        ]
    }
    assert _rows(agent) == before
    assert not AuditEvent.objects.filter(action="user.erase").exists()


def test_the_agent_itself_cannot_be_erased(api, agent, owners):
    before = _rows(agent)

    with pytest.raises(InvalidInput, match="user must be"):
        user_erase(agent=agent, user="", actor=Actor("cli", "test"))
    # No user in the path: the unknown path's 404, not an erasure of the agent.
    assert api.delete("/users/").json() == {"detail": "not found"}

    assert _rows(agent) == before
    assert not AuditEvent.objects.filter(action="user.erase").exists()


def test_another_agents_key_erases_nothing_of_this_agent(api, other_api, agent, owners):
    before = _rows(agent)

    response = other_api.delete(f"/users/{quote(ERASED, safe='')}")

    assert response.status_code == 200
    assert set(response.json()["deleted"].values()) == {0}
    assert _rows(agent) == before
    assert Session.objects.filter(agent=agent, user=ERASED).count() == 2


def test_the_user_segment_takes_colons_at_signs_and_slashes(api, agent, owners):
    response = api.delete(f"/users/{quote(KEPT, safe='')}")
    assert response.status_code == 200
    assert response.json()["user"] == KEPT
    assert response.json()["deleted"]["sessions"] == 2
    assert api.post("/sessions", {"key": "slashed", "user": "org/team/7"}).status_code == 201

    response = api.delete("/users/org/team/7")

    assert response.json() == {
        "user": "org/team/7",
        "deleted": {**_zeros(), "sessions": 1},
        "vacuumed": False,
    }


def _zeros() -> dict:
    keys = ["sessions", "messages", "summaries", "facts", "fact_versions", "entries"]
    keys += ["entry_aliases", "entry_changes", "learnings", "history", "runs", "error_details"]
    keys += ["provenance_cleared", "audit_events_cleared"]
    return dict.fromkeys(keys, 0)


def test_users_lists_everyone_a_session_or_a_memory_row_names_with_their_sessions(
    api, agent, owners
):
    assert api.post("/sessions", {"key": "third", "user": ERASED}).status_code == 201
    learning = {"kind": "correction", "content": "Say hello.", "user": "only:memory"}
    assert api.post("/learnings", learning).status_code == 201

    first = api.get("/users", {"limit": 2}).json()
    rest = api.get("/users", {"limit": 2, "cursor": first["next_cursor"]}).json()

    assert first["items"] == [
        {"user": KEPT, "sessions": 2},
        {"user": "only:memory", "sessions": 0},
    ]
    assert rest == {"items": [{"user": ERASED, "sessions": 3}], "next_cursor": None}
    assert api.get("/users", {"cursor": "forged"}).status_code == 400


def test_what_was_made_in_or_for_their_sessions_goes_whatever_its_user_column_says(agent, owners):
    # Rows of their session left with the agent's column (a write path that missed the
    # user): a run and a HISTORY entry hold the session's words, an archive its transcript.
    _, erased, _ = owners
    session = Session.objects.get(pk=erased.session_ids[0])
    run = Run.objects.create(
        agent=agent, session=session, kind="summary", trigger="api", status="ok"
    )
    entry = HistoryEntry.objects.create(agent=agent, session=session, content="They said so.")
    archive = entry_archive_add(
        agent=agent,
        name="archive/tg42-a/9",
        content="tg42 turn 8",
        changed_by="compaction",
        detail="session tg42-a: 1 messages",
    )
    kept = Fact.objects.filter(agent=agent, user="").count()
    by_column = [
        m.objects.filter(agent=agent, user=ERASED).count() for m in (Run, HistoryEntry, Entry)
    ]

    erased_counts = user_erase(agent=agent, user=ERASED, actor=Actor("cli", "test"))

    assert not Run.objects.filter(pk=run.pk).exists()
    assert not HistoryEntry.objects.filter(pk=entry.pk).exists()
    assert not Entry.objects.filter(pk=archive.pk).exists()
    counted = [erased_counts.runs, erased_counts.history, erased_counts.entries]
    assert counted == [n + 1 for n in by_column]
    assert Fact.objects.filter(agent=agent, user="").count() == kept  # facts go by column


def test_manage_py_erase_user_by_slug_or_id_prints_the_counts(agent, owners):
    out = StringIO()

    call_command("erase_user", "--agent", agent.slug, ERASED, stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0] == f"Erased user '{ERASED}' of agent 'alice-bot':"
    assert lines[1:3] == ["  sessions: 2", "  messages: 14"]
    assert len(lines) == 15
    assert lines[-2:] == ["  provenance_cleared: 0", "  audit_events_cleared: 0"]
    [event] = AuditEvent.objects.filter(action="user.erase")
    assert (event.source, event.username.startswith("cli")) == ("cli", True)
    again = StringIO()
    call_command("erase_user", "--agent", str(agent.pk), ERASED, stdout=again)
    assert "  sessions: 0" in again.getvalue().splitlines()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "nobody", ERASED], "no agent 'nobody'"),
        (["--agent", "alice-bot", " "], "user must be 1-200 printable characters"),
    ],
)
def test_manage_py_erase_user_refuses_an_unknown_agent_or_a_blank_user(
    agent, owners, args, message
):
    before = _rows(agent)

    with pytest.raises(CommandError, match=message):
        call_command("erase_user", *args, stdout=StringIO())

    assert _rows(agent) == before


def test_the_cached_window_of_an_erased_session_goes_too(
    api, owners, django_capture_on_commit_callbacks
):
    _, erased, _ = owners
    session_id = erased.session_ids[1]
    with django_capture_on_commit_callbacks(execute=True):
        assert api.get(f"/sessions/{session_id}/window").status_code == 200
    token = cache.get(working_memory._token_key(session_id))
    assert cache.get(working_memory._data_key(session_id, token))  # the user's words

    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/users/{quote(ERASED, safe='')}").status_code == 200

    assert cache.get(working_memory._token_key(session_id)) is None
    assert cache.get(working_memory._data_key(session_id, token)) is None


def test_an_earlier_erasures_event_that_named_the_user_names_them_by_hash(agent, owners):
    # Before issue 39 the event held the name; erasing the user again rewrites it.
    old = AuditEvent.objects.create(
        agent=agent, username="agent", source="api", action="user.erase",
        object_type="user", before={"user": ERASED, "sessions": 3},
    )  # fmt: skip
    kept = AuditEvent.objects.create(
        agent=agent, username="agent", source="api", action="user.erase",
        object_type="user", before={"user": KEPT, "sessions": 1},
    )  # fmt: skip

    user_erase(agent=agent, user=ERASED, actor=Actor("cli", "test"))

    old.refresh_from_db()
    kept.refresh_from_db()
    assert old.before == {"user_hmac": user_hmac(agent_id=agent.pk, user=ERASED), "sessions": 3}
    assert kept.before == {"user": KEPT, "sessions": 1}
    assert len(user_erasures(agent=agent, user=ERASED)) == 2


def test_a_vacuum_inside_a_transaction_runs_nothing(agent, owners):
    # The test's own transaction: VACUUM cannot run in one; the erasure still commits to it.
    erased = user_erase(agent=agent, user=ERASED, actor=Actor("cli", "test"))

    assert erasure_vacuum() is False
    assert erased.sessions == 2
