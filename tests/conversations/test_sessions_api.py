import uuid

import pytest

from apps.conversations.models import Message, Session, SessionMeta, Summary
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db


def test_create_session_with_key_then_reuse_it(api, agent):
    first = api.post("/sessions", {"key": "telegram:42", "title": "Support"})
    again = api.post("/sessions", {"key": "telegram:42", "title": "ignored"})

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert first.json()["title"] == "Support"
    assert Session.objects.filter(agent=agent).count() == 1


def test_create_session_without_key_uses_its_id(api):
    response = api.post("/sessions", {})

    body = response.json()
    assert response.status_code == 201
    assert body["key"] == body["id"]


def test_get_session_by_id_or_key(api, session):
    by_id = api.get(f"/sessions/{session.id}")
    by_key = api.get("/sessions/chat-1")

    assert by_id.status_code == 200
    assert by_key.status_code == 200
    assert by_id.json()["id"] == by_key.json()["id"] == str(session.id)


def test_list_sessions_paginates_newest_first(api, agent):
    sessions = [SessionFactory(agent=agent) for _ in range(5)]
    expected = [str(s.id) for s in sorted(sessions, key=lambda s: (s.created_at, s.id))][::-1]

    page1 = api.get("/sessions", {"limit": 2}).json()
    page2 = api.get("/sessions", {"limit": 2, "cursor": page1["next_cursor"]}).json()
    page3 = api.get("/sessions", {"limit": 2, "cursor": page2["next_cursor"]}).json()

    ids = [s["id"] for p in (page1, page2, page3) for s in p["items"]]
    assert ids == expected
    assert page3["next_cursor"] is None


def test_reset_deletes_messages_and_meta_but_keeps_summary(api, session):
    MessageFactory.create_batch(3, session=session)
    SessionMeta.objects.create(session=session, start_at=session.created_at)
    Summary.objects.create(session=session, content="They talked about cats.")

    response = api.post(f"/sessions/{session.id}/reset")

    assert response.status_code == 200
    assert response.json()["deleted_messages"] == 3
    assert Message.objects.filter(session=session).count() == 0
    assert not SessionMeta.objects.filter(session=session).exists()
    assert Summary.objects.get(session=session).content == "They talked about cats."
    assert Session.objects.filter(pk=session.pk).exists()


def test_remove_deletes_session_messages_meta_and_summary(api, session):
    MessageFactory.create_batch(2, session=session)
    SessionMeta.objects.create(session=session)
    Summary.objects.create(session=session, content="x")

    response = api.delete(f"/sessions/{session.id}")

    assert response.status_code == 204
    assert not Session.objects.filter(pk=session.pk).exists()
    assert Message.objects.count() == 0
    assert SessionMeta.objects.count() == 0
    assert Summary.objects.count() == 0


def test_patch_session_title(api, session):
    response = api.patch(f"/sessions/{session.id}", {"title": "Renamed"})

    assert response.status_code == 200
    session.refresh_from_db()
    assert session.title == "Renamed"


def test_unknown_session_is_404(api):
    assert api.get(f"/sessions/{uuid.uuid4()}").status_code == 404
    assert api.get("/sessions/no-such-key").status_code == 404
    assert api.post(f"/sessions/{uuid.uuid4()}/reset").status_code == 404
    assert api.delete(f"/sessions/{uuid.uuid4()}").json() == {"detail": "session not found"}


@pytest.mark.django_db
def test_updating_a_session_removed_since_it_was_read_is_not_found_and_writes_nothing(session):
    # the fuzz found a 500 here: the row went between the read and the save
    from apps.conversations.services import session_update
    from apps.core.errors import NotFound

    Session.objects.filter(pk=session.pk).delete()

    with pytest.raises(NotFound, match="session not found"):
        session_update(session=session, title="Renamed")
    assert not Session.objects.filter(pk=session.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_appending_to_a_session_removed_since_it_was_read_is_not_found_and_writes_nothing(
    session,
):
    # Its messages' key to the session fails at commit; that is not an idempotency race
    # to retry (it was a 409 "idempotency keys kept colliding").
    from django.db import transaction

    from apps.conversations.services import NewMessage, messages_append, session_remove
    from apps.core.errors import NotFound

    read = Session.objects.get(pk=session.pk)
    with transaction.atomic():
        session_remove(session=session)

    with pytest.raises(NotFound, match="session not found"):
        messages_append(session=read, messages=[NewMessage(role="user", content="hello")])
    assert not Message.objects.filter(session_id=session.pk).exists()
    assert not SessionMeta.objects.filter(session_id=session.pk).exists()
