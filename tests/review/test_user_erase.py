"""Issue 26: an editor erases an end user from the review pages after a confirmation. The
page counts what would go without deleting anything; the POST erases, records the editor in
the audit log and goes back to the agent's users. Viewers get 403, other teams 404."""

from urllib.parse import quote

import pytest
from django.urls import reverse

from apps.agents.models import AuditEvent
from apps.conversations.models import Message, Session
from tests.people.erasure_seed import Owner, seed

pytestmark = pytest.mark.django_db

ERASED = "telegram:42"


@pytest.fixture
def owners(api):
    return seed(api, Owner("", "albatross", "own")), seed(api, Owner(ERASED, "zanzibar", "tg42"))


def _url(agent, user=ERASED) -> str:
    return reverse("review:user_erase", args=[agent.slug, user])


def _left(agent) -> tuple[int, int]:
    return (
        Session.objects.filter(agent=agent, user=ERASED).count(),
        Message.objects.filter(session__user=ERASED).count(),
    )


def test_the_page_counts_what_would_be_erased_and_deletes_nothing(editor_client, agent, owners):
    response = editor_client.get(_url(agent))

    assert response.status_code == 200
    page = response.content.decode()
    assert "Erase user <code>telegram:42</code>" in page
    # The header names the person logged in (the end user's name is not `user` here).
    assert '<a href="/accounts/password_change/">eddie</a>' in page
    # The seed of tests/people/test_user_erasure.py, less what after-commit tasks add there
    # (this test's transaction never commits).
    assert response.context["counts"] == [
        ("sessions", 2),
        ("messages", 14),
        ("summaries", 1),
        ("facts", 2),
        ("fact versions", 3),
        ("entries", 4),
        ("entry aliases", 1),
        ("entry changes", 5),
        ("learnings", 1),
        ("history", 1),
        ("runs", 4),
        ("error details", 0),
    ]
    assert "<dt>fact versions</dt><dd>3</dd>" in page
    assert 'class="danger">Erase telegram:42</button>' in page
    assert "zanzibar" not in page
    assert _left(agent) == (2, 14)


def test_an_editors_post_erases_audits_and_goes_back_to_the_users(
    editor_client, editor, agent, owners
):
    response = editor_client.post(_url(agent))

    assert response.status_code == 302
    assert response["Location"] == reverse("review:users", args=[agent.slug])
    assert _left(agent) == (0, 0)
    [event] = AuditEvent.objects.filter(agent=agent, action="user.erase")
    assert (event.source, event.username, event.user) == ("review", "eddie", editor)
    assert "user" not in event.before
    assert event.before["messages"] == 14
    users = editor_client.get(response["Location"]).content.decode()
    assert "Erased user telegram:42: sessions 2, messages 14, summaries 1, facts 2" in users
    # Nothing is left: the page says so and offers no button.
    again = editor_client.get(_url(agent)).content.decode()
    assert "Nothing of this user is left" in again
    assert "danger" not in again


def test_a_viewer_gets_403_and_nothing_is_erased(viewer_client, agent, owners):
    assert viewer_client.post(_url(agent)).status_code == 403
    assert viewer_client.get(_url(agent)).status_code == 403

    assert _left(agent) == (2, 14)
    assert not AuditEvent.objects.filter(action="user.erase").exists()


def test_another_team_gets_404_and_nothing_is_erased(outsider_client, agent, owners):
    assert outsider_client.post(_url(agent)).status_code == 404
    assert _left(agent) == (2, 14)


def test_a_blank_user_is_a_bad_request(editor_client, agent, owners):
    response = editor_client.post(f"/review/agents/{agent.slug}/users/{quote('  ')}/erase/")

    assert response.status_code == 400
    assert _left(agent) == (2, 14)


def test_the_users_page_links_the_erasure_for_editors(editor_client, viewer_client, agent, owners):
    page = reverse("review:user", args=[agent.slug, ERASED])

    assert f'href="{_url(agent)}"' in editor_client.get(page).content.decode()
    assert "/erase/" not in viewer_client.get(page).content.decode()
