"""The access rules every review page shares (apps/review/access.py), seen from outside."""

import logging

import pytest
from django.test import Client
from django.urls import reverse

from apps.facts.models import Fact
from apps.facts.services import fact_save


@pytest.fixture
def pending(agent):
    return fact_save(agent=agent, content="The user's dog is called Rex", pending=True).fact


def test_a_viewer_pressing_an_editors_button_gets_a_plain_403_page_and_no_logged_stack(
    viewer_client, agent, pending, caplog
):
    url = reverse("review:queue_approve", args=[agent.slug, pending.pk])

    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = viewer_client.post(url)

    assert response.status_code == 403
    assert "Not allowed" in response.content.decode()
    assert [r for r in caplog.records if r.exc_info] == []
    assert Fact.objects.get(pk=pending.pk).status == "pending"


def test_another_teams_member_gets_the_sites_404_page(outsider_client, agent):
    response = outsider_client.get(reverse("review:agent", args=[agent.slug]))

    assert response.status_code == 404
    assert "belongs to a team you are not in" in response.content.decode()


def test_anonymous_users_are_sent_to_the_login_page_with_next(anon_client, agent):
    url = reverse("review:facts", args=[agent.slug])

    response = anon_client.get(url)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url}"


def test_the_login_page_logs_in_and_lands_on_the_review_dashboard(viewer, agent):
    client = Client()
    response = client.post("/accounts/login/", {"username": "vera", "password": "pw-vera"})

    assert response.status_code == 302
    assert response["Location"] == "/review/"
    assert agent.slug in client.get("/review/").content.decode()


def test_logout_is_a_post_and_ends_the_session(viewer_client):
    response = viewer_client.post("/accounts/logout/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/"
    assert viewer_client.get("/review/").status_code == 302


def test_password_change_keeps_the_user_logged_in_and_takes_the_new_password(viewer_client):
    response = viewer_client.post(
        "/accounts/password_change/",
        {
            "old_password": "pw-vera",
            "new_password1": "a-much-longer-pass-42",
            "new_password2": "a-much-longer-pass-42",
        },
    )

    assert response.status_code == 302
    assert response["Location"] == "/accounts/password_change/done/"
    assert viewer_client.get("/review/").status_code == 200
    assert Client().login(username="vera", password="a-much-longer-pass-42") is True
