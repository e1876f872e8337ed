import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from apps.agents.models import Membership
from apps.agents.selectors import agent_for_user, agents_for_user, user_role
from apps.agents.services import audit_record, membership_set, snapshot
from apps.core.errors import InvalidInput, NotFound
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


def test_a_member_added_without_a_role_is_a_viewer():
    team = TeamFactory(name="Support")
    agent = AgentFactory(slug="helper", team=team)
    user = get_user_model().objects.create_user("ann", password="pw")
    team.members.add(user)

    assert Membership.objects.get(team=team, user=user).role == "viewer"
    assert user_role(user=user, agent=agent) == "viewer"


def test_membership_set_changes_the_role_in_place():
    team = TeamFactory(name="Support")
    agent = AgentFactory(slug="helper", team=team)
    user = get_user_model().objects.create_user("ann", password="pw")
    membership_set(team=team, user=user, role="viewer")
    membership_set(team=team, user=user, role="editor")

    assert list(Membership.objects.values_list("role", flat=True)) == ["editor"]
    assert user_role(user=user, agent=agent) == "editor"


def test_membership_set_refuses_an_unknown_role():
    team = TeamFactory(name="Support")
    user = get_user_model().objects.create_user("ann", password="pw")

    with pytest.raises(InvalidInput, match="unknown role 'owner'"):
        membership_set(team=team, user=user, role="owner")
    assert Membership.objects.count() == 0


def test_user_role_is_none_outside_the_team_and_editor_for_superusers():
    agent = AgentFactory(slug="helper", team=TeamFactory(name="Support"))
    outsider = get_user_model().objects.create_user("otto", password="pw")
    membership_set(team=TeamFactory(name="Sales"), user=outsider, role="editor")
    root = get_user_model().objects.create_superuser("root", "r@example.com", "pw")

    assert user_role(user=outsider, agent=agent) is None
    assert user_role(user=AnonymousUser(), agent=agent) is None
    assert user_role(user=root, agent=agent) == "editor"


def test_agent_for_user_hides_another_teams_agent_as_missing():
    AgentFactory(slug="helper", team=TeamFactory(name="Support"))
    outsider = get_user_model().objects.create_user("otto", password="pw")
    membership_set(team=TeamFactory(name="Sales"), user=outsider, role="editor")

    with pytest.raises(NotFound, match="no agent 'helper'"):
        agent_for_user(user=outsider, slug="helper")
    with pytest.raises(NotFound, match="no agent 'nobody'"):
        agent_for_user(user=outsider, slug="nobody")
    assert list(agents_for_user(user=AnonymousUser())) == []


def test_a_user_in_two_teams_sees_each_agent_once():
    support, sales = TeamFactory(name="Support"), TeamFactory(name="Sales")
    AgentFactory(slug="helper", team=support)
    AgentFactory(slug="closer", team=sales)
    user = get_user_model().objects.create_user("ann", password="pw")
    membership_set(team=support, user=user, role="viewer")
    membership_set(team=sales, user=user, role="editor")

    assert [a.slug for a in agents_for_user(user=user)] == ["closer", "helper"]


def test_audit_record_keeps_json_safe_snapshots_and_survives_the_user():
    agent = AgentFactory(slug="helper", team=TeamFactory(name="Support"))
    user = get_user_model().objects.create_user("ann", password="pw")
    before = snapshot(agent, ["slug", "created_at", "settings"])

    event = audit_record(
        user=user,
        agent=agent,
        source="review",
        action="agent.rename",
        target=agent,
        before=before,
        after={"slug": "helper-2"},
    )
    user.delete()
    event.refresh_from_db()

    assert event.user is None
    assert event.username == "ann"
    assert (event.object_type, event.object_id) == ("agent", str(agent.pk))
    assert event.before == {
        "slug": "helper",
        "created_at": agent.created_at.isoformat(),
        "settings": {},
    }
    assert event.after == {"slug": "helper-2"}
