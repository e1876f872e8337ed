"""Seed 000's remove-session ("directory deleted; cleared"): DELETE /sessions/{id} deletes the
session with its messages, markers, meta, summary and archives. Its runs and history
entries stay, without the session. A reset is different: it keeps every archive."""

from datetime import timedelta

import pytest

from apps.conversations.models import CompactMarker, Message, Session, SessionMeta, Summary
from apps.entries.models import Entry, EntryAlias, EntryChange
from apps.entries.services import entry_add
from apps.lifecycle.models import HistoryEntry, Run
from tests.lifecycle.helpers import T0, add

pytestmark = pytest.mark.django_db


def _talk(session, n=4, start=T0):
    texts = [f"{session.key} {'q' if i % 2 == 0 else 'a'}{i} " + "x" * 50 for i in range(2 * n)]
    return add(session, *texts, role=None, start=start)


def _compact(api, session) -> str:
    body = api.post(f"/sessions/{session.id}/compact").json()
    [run] = [r for r in body["runs"] if r["kind"] == "compact"]
    assert run["status"] == "fallback", run  # no LLM: an extractive archive
    return body["markers"][-1]["archive_name"]


def _archives(agent) -> list[str]:
    return sorted(Entry.objects.filter(agent=agent, kind="archive").values_list("name", flat=True))


@pytest.fixture
def removed_and_kept(api, agent, session):
    """chat-1 with a compaction archive, a reset archive and a second compaction archive;
    beside it chat-2, and "chat 1", whose archives share chat-1's prefix."""
    _talk(session)
    first = _compact(api, session)
    reset = api.post(f"/sessions/{session.id}/reset").json()["archive"]
    _talk(session, start=T0 + timedelta(hours=1))
    second = _compact(api, session)
    Summary.objects.update_or_create(session=session, defaults={"content": "About chat-1."})

    chat2 = Session.objects.create(agent=agent, key="chat-2")
    _talk(chat2)
    chat2_archive = _compact(api, chat2)
    spaced = Session.objects.create(agent=agent, key="chat 1")
    _talk(spaced)
    spaced_archive = _compact(api, spaced)
    return (first, reset, second), (chat2, chat2_archive, spaced, spaced_archive)


def test_removing_a_session_deletes_its_archives_markers_and_meta(
    api, agent, session, removed_and_kept
):
    own, (chat2, chat2_archive, spaced, spaced_archive) = removed_and_kept
    assert own == ("archive/chat-1/1", "archive/chat-1/2", "archive/chat-1/3")
    assert spaced_archive == "archive/chat-1/4"  # "chat 1" shares chat-1's prefix
    runs = set(Run.objects.filter(session=session).values_list("pk", flat=True))
    history = set(HistoryEntry.objects.filter(session=session).values_list("pk", flat=True))
    # compactions, the reset's consolidation and its history entry
    assert runs
    assert history

    response = api.delete(f"/sessions/{session.id}")

    assert response.status_code == 204
    assert not Session.objects.filter(pk=session.pk).exists()
    for model in (Message, CompactMarker, SessionMeta, Summary):
        assert not model.objects.filter(session_id=session.pk).exists(), model
    assert _archives(agent) == sorted([chat2_archive, spaced_archive])
    removed = EntryChange.objects.filter(changed_by="remove-session").order_by("entry_name")
    assert [(c.entry_name, c.action, c.previous_content, c.detail) for c in removed] == [
        (name, "remove", "", "session chat-1 removed") for name in own
    ]
    # Runs and seed 004's append-only history stay, without the session.
    assert set(Run.objects.filter(pk__in=runs).values_list("session_id", "session_key")) == {
        (None, "chat-1")
    }
    assert set(
        HistoryEntry.objects.filter(pk__in=history).values_list("session_id", "session_key")
    ) == {(None, "chat-1")}
    # The other sessions are untouched, markers and all.
    for other in (chat2, spaced):
        assert Message.objects.filter(session=other).count() == 8
        assert CompactMarker.objects.filter(session=other).count() == 1
    assert api.get(f"/entries/{spaced_archive}").status_code == 200


def test_a_renamed_archive_goes_with_its_session(api, agent, session):
    _talk(session)
    name = _compact(api, session)
    assert api.patch(f"/entries/{name}", {"name": "keep/cats"}).status_code == 200

    assert api.delete(f"/sessions/{session.id}").status_code == 204

    assert _archives(agent) == []
    assert not EntryAlias.objects.filter(agent=agent).exists()


def test_another_agents_archives_with_the_same_key_are_untouched(
    api, other_api, session, other_agent
):
    theirs = Session.objects.create(agent=other_agent, key="chat-1")
    _talk(session)
    _talk(theirs)
    _compact(api, session)
    _compact(other_api, theirs)

    assert api.delete(f"/sessions/{session.id}").status_code == 204
    assert other_api.delete(f"/sessions/{session.id}").status_code == 404

    assert _archives(other_agent) == ["archive/chat-1/1"]
    assert Message.objects.filter(session=theirs).count() == 8


def test_reset_still_keeps_the_archives_and_the_session(api, agent, session):
    _talk(session)
    compacted = _compact(api, session)

    body = api.post(f"/sessions/{session.id}/reset").json()

    assert _archives(agent) == sorted([compacted, body["archive"]])
    assert Session.objects.filter(pk=session.pk).exists()
    assert not CompactMarker.objects.filter(session=session).exists()
    assert not Message.objects.filter(session=session).exists()


def test_another_owners_entry_of_a_markers_name_is_untouched(api, agent):
    """A user's session names its archive "archive/chat-1/1"; the agent's own archive of
    that name (another owner) stays when the session goes."""
    session = Session.objects.create(agent=agent, key="chat-1", user="bob")
    _talk(session)
    name = _compact(api, session)
    agents_own = entry_add(agent=agent, name=name, content="the agent's", kind="archive")

    assert api.delete(f"/sessions/{session.id}").status_code == 204

    assert list(Entry.objects.filter(agent=agent).values_list("pk", "user")) == [
        (agents_own.pk, "")
    ]
