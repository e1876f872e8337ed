"""Humans log in to the admin; history is read-only there except importance; keys revoke."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from apps.agents.models import ApiKey
from apps.agents.services import api_key_issue
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client():
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456")
    client = Client()
    client.force_login(user)
    return client


def test_admin_requires_login():
    response = Client().get("/admin/conversations/message/")

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize(
    "model",
    [
        "agents/team",
        "agents/agent",
        "agents/apikey",
        "conversations/session",
        "conversations/sessionmeta",
        "conversations/summary",
        "conversations/message",
    ],
)
def test_every_model_has_a_searchable_changelist(admin_client, session, model):
    MessageFactory(session=session, content="needle in the haystack")

    response = admin_client.get(f"/admin/{model}/", {"q": "needle"})

    assert response.status_code == 200


def test_message_search_finds_content(admin_client, session):
    MessageFactory(session=session, content="needle in the haystack")
    MessageFactory(session=session, content="just hay")

    response = admin_client.get("/admin/conversations/message/", {"q": "needle"})

    assert response.context["cl"].result_count == 1


def test_message_is_read_only_except_importance(admin_client, session):
    message = MessageFactory(session=session, content="original", importance=0.5)
    url = reverse("admin:conversations_message_change", args=[message.pk])

    page = admin_client.get(url)
    response = admin_client.post(
        url, {"importance": "0.9", "content": "tampered", "role": "system"}
    )

    assert page.status_code == 200
    assert list(page.context["adminform"].form.fields) == ["importance"]
    assert response.status_code == 302
    message.refresh_from_db()
    assert message.importance == 0.9
    assert message.content == "original"
    assert message.role == "user"


def test_messages_cannot_be_added_in_admin(admin_client):
    assert admin_client.get("/admin/conversations/message/add/").status_code == 403


def test_revoke_action_revokes_keys(admin_client, agent):
    issued = api_key_issue(agent=agent)

    response = admin_client.post(
        "/admin/agents/apikey/",
        {"action": "revoke", "_selected_action": [issued.api_key.pk]},
    )

    assert response.status_code == 302
    assert ApiKey.objects.get(pk=issued.api_key.pk).revoked_at is not None
    api = Client()
    assert (
        api.get("/api/v1/agent", headers={"Authorization": f"Bearer {issued.raw}"}).status_code
        == 401
    )


def test_issue_key_action_shows_a_working_key_once(admin_client, agent):
    response = admin_client.post(
        "/admin/agents/agent/",
        {"action": "issue_key", "_selected_action": [agent.pk]},
        follow=True,
    )

    (text,) = [str(m) for m in response.context["messages"]]
    raw = text.rsplit(": ", 1)[1]
    assert raw.startswith("mh_")
    assert ApiKey.objects.filter(agent=agent).count() == 1
    ok = Client().get("/api/v1/agent", headers={"Authorization": f"Bearer {raw}"})
    assert ok.json()["slug"] == agent.slug


def test_message_list_filters_by_embedding_state(admin_client, session):
    MessageFactory(session=session)

    response = admin_client.get("/admin/conversations/message/", {"embedding__isempty": "1"})

    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
