"""People for the review pages: anonymous, another team's editor, a viewer and an editor of
`agent`'s team. Every view is tested as each of them."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.agents.models import MemberRole
from apps.agents.services import membership_set


def _user(username: str, team, role: str):
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    membership_set(team=team, user=user, role=role)
    return user


@pytest.fixture
def viewer(agent):
    return _user("vera", agent.team, MemberRole.VIEWER)


@pytest.fixture
def editor(agent):
    return _user("eddie", agent.team, MemberRole.EDITOR)


@pytest.fixture
def outsider(other_agent):
    """An editor, but of another team (the one of `other_agent`)."""
    return _user("otto", other_agent.team, MemberRole.EDITOR)


def _client(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def anon_client(db):
    return _client()


@pytest.fixture
def viewer_client(viewer):
    return _client(viewer)


@pytest.fixture
def editor_client(editor):
    return _client(editor)


@pytest.fixture
def outsider_client(outsider):
    return _client(outsider)
