"""Issue 39: the review pages list an agent's API keys with their scope; an editor issues a
key bound to a user and/or read-only (its raw value shown once, on the answer to the POST)
that works against the API with that scope, and revokes one. Both are audited. Viewers
see and get 403 for the buttons; other teams 404."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from apps.agents.models import ApiKey, AuditEvent
from apps.agents.services import api_key_issue, api_key_revoke
from tests.support.client import ApiClient

pytestmark = pytest.mark.django_db


def _keys(agent) -> str:
    return reverse("review:keys", args=[agent.slug])


def _create(agent) -> str:
    return reverse("review:key_create", args=[agent.slug])


def _revoke(agent, api_key) -> str:
    return reverse("review:key_revoke", args=[agent.slug, api_key.pk])


def _raw(page: str) -> str:
    (raw,) = re.findall(r'<code class="issued-key">(mh_[^<]+)</code>', page)
    return raw


def test_the_page_lists_each_key_with_its_scope(viewer_client, agent):
    bound = api_key_issue(agent=agent, name="alice-app", user="telegram:1", read_only=True)
    full = api_key_issue(agent=agent, name="server")
    api_key_revoke(api_key=full.api_key)

    response = viewer_client.get(_keys(agent))

    assert response.status_code == 200
    page = response.content.decode()
    rows = re.findall(r'<tr id="key-(\d+)" class="key-row">(.*?)</tr>', page, re.S)
    by_pk = {int(pk): row for pk, row in rows}
    assert set(by_pk) == {bound.api_key.pk, full.api_key.pk}
    assert "<code>telegram:1</code>" in by_pk[bound.api_key.pk]
    assert "read-only" in by_pk[bound.api_key.pk]
    assert "every user" in by_pk[full.api_key.pk]
    assert "read-write" in by_pk[full.api_key.pk]
    assert re.search(r'class="key-revoked">\d{4}-', by_pk[full.api_key.pk])
    assert bound.raw not in page
    assert "New key" not in page
    assert "Revoke this key</button>" not in page


def test_an_editor_issues_a_scoped_key_shown_once_that_works_with_its_scope(editor_client, agent):
    response = editor_client.post(
        _create(agent), {"name": "alice-app", "user": "telegram:1", "read_only": "on"}
    )

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    page = response.content.decode()
    raw = _raw(page)
    assert "user telegram:1, read-only" in page
    stored = ApiKey.objects.get(agent=agent, name="alice-app")
    assert (stored.user, stored.read_only) == ("telegram:1", True)
    assert raw.startswith(f"mh_{stored.prefix}_")
    assert raw not in editor_client.get(_keys(agent)).content.decode()
    api = ApiClient(key=raw, client=Client())
    assert api.get("/sessions").status_code == 200
    assert api.get("/sessions", {"user": "telegram:2"}).status_code == 403
    assert api.post("/sessions", {"key": "x"}).status_code == 403  # read-only
    event = AuditEvent.objects.get(action="apikey.issue")
    assert (event.username, event.source, event.object_id) == ("eddie", "review", str(stored.pk))
    assert event.after["user"] == "telegram:1"
    assert event.after["read_only"] is True
    assert "hashed_key" not in event.after


def test_an_unbound_key_from_the_page_acts_for_every_user(editor_client, agent):
    response = editor_client.post(_create(agent), {"user": ""})

    raw = _raw(response.content.decode())
    stored = ApiKey.objects.get(agent=agent)
    assert (stored.user, stored.read_only, stored.name) == ("", False, "review:eddie")
    api = ApiClient(key=raw, client=Client())
    assert api.post("/sessions", {"key": "k", "user": "telegram:2"}).status_code == 201


def test_a_user_that_is_no_user_is_refused_and_no_key_issued(editor_client, agent):
    response = editor_client.post(_create(agent), {"user": "bad\u0007user"})

    assert response.status_code == 400
    assert "user must be 1-200 printable characters" in response.content.decode()
    assert ApiKey.objects.filter(agent=agent).count() == 0


def test_an_editor_revokes_a_key_and_the_api_refuses_it(editor_client, agent):
    issued = api_key_issue(agent=agent, name="old", user="telegram:1")

    response = editor_client.post(_revoke(agent, issued.api_key))

    assert response.status_code == 302
    assert response["Location"] == _keys(agent)
    assert ApiKey.objects.get(pk=issued.api_key.pk).revoked_at is not None
    assert ApiClient(key=issued.raw, client=Client()).get("/agent").status_code == 401
    event = AuditEvent.objects.get(action="apikey.revoke")
    assert (event.before["revoked_at"], event.after["revoked_at"] is not None) == (None, True)


def test_a_viewer_may_not_issue_or_revoke(viewer_client, agent):
    issued = api_key_issue(agent=agent)

    assert viewer_client.post(_create(agent), {"user": "x"}).status_code == 403
    assert viewer_client.post(_revoke(agent, issued.api_key)).status_code == 403
    assert ApiKey.objects.filter(agent=agent).count() == 1
    assert ApiKey.objects.get().revoked_at is None
    assert AuditEvent.objects.count() == 0


def test_another_team_gets_404_and_cannot_revoke(outsider_client, agent, other_agent):
    issued = api_key_issue(agent=agent)
    theirs = api_key_issue(agent=other_agent)

    assert outsider_client.get(_keys(agent)).status_code == 404
    assert outsider_client.post(_revoke(agent, issued.api_key)).status_code == 404
    # Their own agent's page cannot reach another agent's key either.
    assert outsider_client.post(_revoke(other_agent, issued.api_key)).status_code == 404
    assert ApiKey.objects.filter(revoked_at__isnull=False).count() == 0
    assert theirs.api_key.revoked_at is None
