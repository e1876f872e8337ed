import pytest
from django.contrib.auth import get_user_model

from apps.agents.selectors import agents_for_user
from tests.factories import AgentFactory, TeamFactory

pytestmark = pytest.mark.django_db


def test_a_user_sees_only_their_teams_agents():
    support, sales = TeamFactory(name="Support"), TeamFactory(name="Sales")
    helper = AgentFactory(slug="helper", team=support)
    AgentFactory(slug="closer", team=sales)
    user = get_user_model().objects.create_user("ann", password="pw")
    support.members.add(user)

    assert list(agents_for_user(user=user)) == [helper]


def test_a_superuser_sees_every_agent():
    AgentFactory(slug="a")
    AgentFactory(slug="b")
    root = get_user_model().objects.create_superuser("root", "r@example.com", "pw")

    assert [a.slug for a in agents_for_user(user=root)] == ["a", "b"]
