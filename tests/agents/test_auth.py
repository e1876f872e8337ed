import pytest
from django.test import Client

from apps.agents.models import ApiKey
from apps.agents.services import api_key_issue, api_key_revoke, hash_key
from tests.support.client import ApiClient

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer",
        "Bearer ",
        "Basic abc",
        "Bearer mh_nope",
        "Bearer mh_deadbeef_wrongsecret",
        "Token mh_x_y",
        "Bearer " + "a" * 5000,
    ],
)
def test_missing_or_malformed_key_is_401(agent, header):
    headers = {"Authorization": header} if header else {}

    response = Client().get("/api/v1/sessions", headers=headers)

    assert response.status_code == 401
    assert response.json() == {"detail": "missing, malformed or revoked API key"}


def test_revoked_key_is_401(agent):
    issued = api_key_issue(agent=agent)
    api = ApiClient(key=issued.raw, client=Client())
    assert api.get("/sessions").status_code == 200

    api_key_revoke(api_key=issued.api_key)

    assert api.get("/sessions").status_code == 401


def test_key_with_right_prefix_and_wrong_secret_is_401(agent):
    issued = api_key_issue(agent=agent)
    forged = issued.raw[:-4] + ("AAAA" if not issued.raw.endswith("AAAA") else "BBBB")

    assert ApiClient(key=forged, client=Client()).get("/sessions").status_code == 401


def test_key_is_stored_hashed_with_a_visible_prefix(agent):
    issued = api_key_issue(agent=agent, name="laptop")

    stored = ApiKey.objects.get(pk=issued.api_key.pk)
    assert issued.raw.startswith(f"mh_{stored.prefix}_")
    assert stored.hashed_key == hash_key(issued.raw)
    assert issued.raw not in (stored.hashed_key, stored.prefix, stored.name)
    assert len(issued.raw) > 40


def test_use_records_last_used_at(api, agent):
    api.get("/sessions")

    assert ApiKey.objects.get(agent=agent).last_used_at is not None
