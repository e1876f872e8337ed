"""Humans log in to the admin; history is read-only there except importance; keys revoke."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from apps.agents.models import ApiKey
from apps.agents.services import api_key_issue
from apps.conversations.models import Summary
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


def test_issue_key_action_shows_a_working_key_once_on_its_own_page(admin_client, agent):
    response = admin_client.post(
        "/admin/agents/agent/", {"action": "issue_key", "_selected_action": [agent.pk]}
    )

    assert response.status_code == 200
    assert response.templates[0].name == "admin/agents/issued_key.html"
    (issued,) = response.context["issued"]
    raw = issued.raw
    assert raw.startswith("mh_")
    assert f'<code class="issued-key">{raw}</code>' in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    assert all(raw not in morsel.value for morsel in response.cookies.values())
    assert list(response.context["messages"]) == []
    assert ApiKey.objects.filter(agent=agent).count() == 1
    ok = Client().get("/api/v1/agent", headers={"Authorization": f"Bearer {raw}"})
    assert ok.json()["slug"] == agent.slug
    after = admin_client.get("/admin/agents/agent/")
    assert raw not in after.content.decode()
    assert list(after.context["messages"]) == []


def test_message_list_filters_by_embedding_state(admin_client, session):
    MessageFactory(session=session)

    response = admin_client.get("/admin/conversations/message/", {"embedding__isempty": "1"})

    assert response.status_code == 200
    assert response.context["cl"].result_count == 1


def test_the_admin_is_branded_and_links_to_the_review_pages(admin_client):
    page = admin_client.get("/admin/").content.decode()

    assert "<title>Curate agents, memory and keys | memoryhub administration</title>" in page
    assert '<a href="/admin/">memoryhub administration</a>' in page
    assert '<a href="/review/">View site</a>' in page
    assert "Django administration" not in page


def test_the_message_filters_have_distinct_titles(admin_client, session):
    MessageFactory(session=session)
    MessageFactory()  # another agent, of another team: every filter has a choice to offer

    response = admin_client.get("/admin/conversations/message/")

    titles = [spec.title for spec in response.context["cl"].filter_specs]
    assert titles == ["role", "team", "agent", "has vector", "embedding status"]
    page = response.content.decode()
    assert (page.count(" By has vector "), page.count(" By embedding status ")) == (1, 1)
    assert " By embedding \n" not in page


def test_the_session_page_shows_its_messages_summary_and_facts(admin_client, session):
    MessageFactory(session=session, content="first")
    MessageFactory(session=session, content="second")
    MessageFactory(content="another session")
    Summary.objects.create(session=session, content="They talked about tea.")

    page = admin_client.get(f"/admin/conversations/session/{session.pk}/change/").content.decode()
    listed = admin_client.get(f"/admin/conversations/message/?session__id__exact={session.pk}")
    facts = admin_client.get(f"/admin/facts/fact/?session__id__exact={session.pk}")

    assert (
        f'<a href="/admin/conversations/message/?session__id__exact={session.pk}">2 message(s)</a>'
        in page
    )
    assert "They talked about tea." in page
    assert f'<a href="/admin/facts/fact/?session__id__exact={session.pk}">' in page
    assert {m.content for m in listed.context["cl"].result_list} == {"first", "second"}
    assert facts.status_code == 200


def test_the_key_add_page_issues_a_scoped_key_shown_once(admin_client, agent):
    form = admin_client.get("/admin/agents/apikey/add/")
    response = admin_client.post(
        "/admin/agents/apikey/add/",
        {"agent": agent.pk, "name": "alice-app", "user": "telegram:1", "read_only": "on"},
    )

    assert list(form.context["adminform"].form.fields) == ["agent", "name", "user", "read_only"]
    assert response.status_code == 200
    assert response.templates[0].name == "admin/agents/issued_key.html"
    assert "no-store" in response["Cache-Control"]
    (issued,) = response.context["issued"]
    page = response.content.decode()
    assert f'<code class="issued-key">{issued.raw}</code>' in page
    assert '<td class="key-scope">user telegram:1, read-only</td>' in page
    stored = ApiKey.objects.get(agent=agent, name="alice-app")
    assert (stored.user, stored.read_only, stored.pk) == ("telegram:1", True, issued.api_key.pk)
    headers = {"Authorization": f"Bearer {issued.raw}"}
    assert Client().get("/api/v1/facts", headers=headers).status_code == 200
    assert Client().get("/api/v1/facts?user=telegram:2", headers=headers).status_code == 403
    listing = admin_client.get("/admin/agents/apikey/").content.decode()
    assert "user telegram:1, read-only" in listing
    assert issued.raw not in listing


def test_the_key_add_page_refuses_a_user_that_is_no_user(admin_client, agent):
    response = admin_client.post(
        "/admin/agents/apikey/add/", {"agent": agent.pk, "name": "x", "user": "a\u0007b"}
    )

    assert response.status_code == 200  # the form again, with its error
    assert response.context["adminform"].form.errors == {
        "user": ["user must be 1-200 printable characters"]
    }
    assert ApiKey.objects.filter(agent=agent).count() == 0
