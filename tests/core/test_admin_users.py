"""The admin of rows that belong to a user (issue 26): sessions, facts, entries, learnings,
HISTORY entries and runs show `user`, filter by it (the agent's own rows as such) and search
it; the filter's choices keep to the staff user's teams; a session's user is set at creation
and read-only after."""

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from apps.agents.scoping import UserListFilter
from apps.agents.users import AGENT
from apps.conversations.models import Session
from tests.factories import AgentFactory
from tests.review.users_seed import ALICE, BOB, seed_owner, seed_three

pytestmark = pytest.mark.django_db

APPS = ["agents", "conversations", "facts", "entries", "learnings", "lifecycle"]
# admin path -> the seeded row of an owner it lists
MODELS = {
    "conversations/session": lambda o: o.session,
    "facts/fact": lambda o: o.facts,
    "entries/entry": lambda o: [*o.documents, o.note],
    "learnings/learning": lambda o: o.learning,
    "lifecycle/historyentry": lambda o: o.history,
    "lifecycle/run": lambda o: o.run,
}


def _pks(rows) -> set:
    return {r.pk for r in (rows if isinstance(rows, list) else [rows])}


@pytest.fixture
def owners(agent):
    return seed_three(agent)


@pytest.fixture
def mallory(db):
    """A user of another team's agent."""
    return seed_owner(AgentFactory(slug="mallory-bot"), "mallory:7", "mallory")


@pytest.fixture
def root(db):
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


@pytest.fixture
def staff(agent):
    """A staff user of `agent`'s team, with every permission on the memoryhub models."""
    user = User.objects.create_user("sam", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=APPS))
    agent.team.members.add(user)
    client = Client()
    client.force_login(user)
    return client


def _listed(client, model, **params) -> set:
    response = client.get(f"/admin/{model}/", params)
    assert response.status_code == 200
    return {obj.pk for obj in response.context["cl"].result_list}


@pytest.mark.parametrize("model", MODELS)
def test_the_changelist_shows_filters_and_searches_the_user(staff, owners, mallory, model):
    rows = {owner: _pks(MODELS[model](o)) for owner, o in owners.items()}

    response = staff.get(f"/admin/{model}/")

    assert "user" in response.context["cl"].list_display
    assert _listed(staff, model, user=ALICE) == rows[ALICE]
    assert _listed(staff, model, user=AGENT) == rows[AGENT]
    assert _listed(staff, model, q="telegram") == rows[ALICE]
    assert _listed(staff, model, user="mallory:7") == set()


@pytest.mark.parametrize("model", MODELS)
def test_the_user_filter_offers_the_teams_users_and_the_agents_own(
    staff, root, owners, mallory, model
):
    def offered(client) -> list[str]:
        response = client.get(f"/admin/{model}/")
        [spec] = [f for f in response.context["cl"].filter_specs if isinstance(f, UserListFilter)]
        return [c["display"] for c in spec.choices(response.context["cl"])]

    assert offered(staff) == ["All", UserListFilter.AGENT_LABEL, BOB, ALICE]
    assert offered(root) == ["All", UserListFilter.AGENT_LABEL, BOB, "mallory:7", ALICE]


def test_a_sessions_user_is_set_at_creation_and_read_only_after(root, owners):
    session = owners[ALICE].session

    add = root.get("/admin/conversations/session/add/")
    change = root.get(f"/admin/conversations/session/{session.pk}/change/")
    root.post(
        f"/admin/conversations/session/{session.pk}/change/",
        {"key": session.key, "title": "renamed", "user": "someone-else", "metadata": "{}"},
    )

    assert "user" in add.context["adminform"].form.fields
    assert "user" not in change.context["adminform"].form.fields
    assert "telegram:42" in change.content.decode()
    assert Session.objects.values_list("title", "user").get(pk=session.pk) == ("renamed", ALICE)
