"""The admin keeps a staff user to their teams: every list, every foreign-key choice and every
object page; superusers see every team."""

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from apps.agents.models import Agent, ApiKey, AuditEvent, Team
from apps.agents.services import api_key_issue, audit_record
from apps.conversations.models import Message, Session, SessionMeta, Summary
from apps.entries.models import Entry
from apps.entries.services import entry_add
from apps.facts.models import Category, Fact
from apps.facts.services import fact_save
from apps.learnings.models import ErrorRecord, Learning
from apps.learnings.services import error_record_create, learning_create
from apps.lifecycle.models import HistoryEntry, Lease, Run
from tests.factories import AgentFactory, MessageFactory, SessionFactory, TeamFactory

pytestmark = pytest.mark.django_db

APPS = ["agents", "conversations", "facts", "entries", "learnings", "lifecycle"]


def _team_rows(name: str) -> dict[str, object]:
    """One row of every admin-registered model, for a team of its own."""
    team = TeamFactory(name=name)
    agent = AgentFactory(slug=f"{name}-bot", team=team)
    session = SessionFactory(agent=agent, key=f"{name}-chat")
    fact = fact_save(agent=agent, content=f"{name} likes tea", category=f"{name}-cat").fact
    error, _ = error_record_create(agent=agent, tool_name=f"{name}_tool", error="boom")
    run = Run.objects.create(agent=agent, kind="summary", trigger="manual", status="ok")
    return {
        "agents/team": team,
        "agents/agent": agent,
        "agents/apikey": api_key_issue(agent=agent).api_key,
        "agents/auditevent": audit_record(
            user=None, agent=agent, source="review", action="fact.update", target=fact
        ),
        "conversations/session": session,
        "conversations/sessionmeta": SessionMeta.objects.create(session=session),
        "conversations/summary": Summary.objects.create(session=session, content=f"{name} sum"),
        "conversations/message": MessageFactory(session=session, content=f"{name} says hi"),
        "facts/fact": fact,
        "facts/category": fact.category,
        "entries/entry": entry_add(agent=agent, name=f"{name}-note", content="text"),
        "learnings/errorrecord": error,
        "learnings/learning": learning_create(agent=agent, kind="error", content=f"{name} l"),
        "lifecycle/run": run,
        "lifecycle/historyentry": HistoryEntry.objects.create(agent=agent, content=f"{name} h"),
    }


@pytest.fixture
def rows(db):
    return {"a": _team_rows("acme"), "b": _team_rows("bravo")}


@pytest.fixture
def staff_a(rows):
    """A staff user of team acme, with every permission on the memoryhub models."""
    user = User.objects.create_user("sam", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=APPS))
    rows["a"]["agents/team"].members.add(user)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def root(db):
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


MODELS = [
    "agents/team",
    "agents/agent",
    "agents/apikey",
    "agents/auditevent",
    "conversations/session",
    "conversations/sessionmeta",
    "conversations/summary",
    "conversations/message",
    "facts/fact",
    "facts/category",
    "entries/entry",
    "learnings/errorrecord",
    "learnings/learning",
    "lifecycle/run",
    "lifecycle/historyentry",
]


def _listed(client, model) -> set:
    response = client.get(f"/admin/{model}/")
    assert response.status_code == 200
    return {obj.pk for obj in response.context["cl"].result_list}


@pytest.mark.parametrize("model", MODELS)
def test_a_staff_user_lists_exactly_their_teams_rows(staff_a, rows, model):
    assert _listed(staff_a, model) == {rows["a"][model].pk}


@pytest.mark.parametrize("model", MODELS)
def test_a_superuser_lists_every_teams_rows(root, rows, model):
    listed = _listed(root, model)

    assert {rows["a"][model].pk, rows["b"][model].pk} <= listed
    if model != "agents/auditevent":
        assert listed == {rows["a"][model].pk, rows["b"][model].pk}


@pytest.mark.parametrize("model", MODELS)
def test_another_teams_object_page_redirects_to_the_index_and_shows_nothing(staff_a, rows, model):
    pk = rows["b"][model].pk

    change = staff_a.get(f"/admin/{model}/{pk}/change/")
    delete = staff_a.get(f"/admin/{model}/{pk}/delete/")
    followed = staff_a.get(f"/admin/{model}/{pk}/change/", follow=True)

    # Django answers an object outside get_queryset as if it did not exist
    assert (change.status_code, change["Location"]) == (302, "/admin/")
    if model in ("agents/auditevent", "lifecycle/historyentry"):  # nobody may delete these
        assert delete.status_code == 403
    else:
        assert (delete.status_code, delete["Location"]) == (302, "/admin/")
    assert followed.status_code == 200
    assert "doesn\u2019t exist" in followed.content.decode()  # Django's curly quote
    assert "bravo" not in followed.content.decode()


@pytest.mark.parametrize("model", MODELS)
def test_own_object_page_opens(staff_a, rows, model):
    response = staff_a.get(f"/admin/{model}/{rows['a'][model].pk}/change/")

    assert response.status_code == 200


def test_foreign_key_choices_keep_to_the_team(staff_a, rows):
    learning_add = staff_a.get("/admin/learnings/learning/add/")
    agent_change = staff_a.get(f"/admin/agents/agent/{rows['a']['agents/agent'].pk}/change/")
    fact_change = staff_a.get(f"/admin/facts/fact/{rows['a']['facts/fact'].pk}/change/")

    form = learning_add.context["adminform"].form
    assert list(form.fields["agent"].queryset) == [rows["a"]["agents/agent"]]
    assert list(agent_change.context["adminform"].form.fields["team"].queryset) == [
        rows["a"]["agents/team"]
    ]
    assert list(fact_change.context["adminform"].form.fields["category"].queryset) == [
        rows["a"]["facts/category"]
    ]
    for page in (learning_add, agent_change, fact_change):
        assert "bravo" not in page.content.decode()


def test_a_superuser_chooses_among_every_team(root, rows):
    form = root.get("/admin/learnings/learning/add/").context["adminform"].form

    assert set(form.fields["agent"].queryset) == {
        rows["a"]["agents/agent"],
        rows["b"]["agents/agent"],
    }


def test_a_staff_user_cannot_post_another_teams_agent(staff_a, rows):
    response = staff_a.post(
        "/admin/learnings/learning/add/",
        {"agent": rows["b"]["agents/agent"].pk, "kind": "error", "content": "sneaky",
         "status": "active"},
    )  # fmt: skip

    assert response.status_code == 200
    assert "agent" in response.context["adminform"].form.errors
    assert not Learning.objects.filter(content="sneaky").exists()


@pytest.mark.parametrize(
    "model", ["conversations/message", "lifecycle/run", "agents/apikey", "conversations/session"]
)
def test_related_filters_list_only_the_teams_agents(staff_a, root, rows, model):
    page = staff_a.get(f"/admin/{model}/").content.decode()

    # with one agent, the agent filter is not even shown; a superuser's lists both
    assert "bravo" not in page
    assert "bravo-bot" in root.get(f"/admin/{model}/").content.decode()


def test_the_team_page_shows_its_members(staff_a, rows):
    response = staff_a.get(f"/admin/agents/team/{rows['a']['agents/team'].pk}/change/")

    (memberships,) = [
        f
        for f in response.context["inline_admin_formsets"]
        if f.opts.model.__name__ == "Membership"
    ]
    assert [form.instance.user.username for form in memberships.formset.forms] == ["sam"]


def test_a_staff_user_cannot_issue_a_key_for_another_teams_agent(staff_a, rows):
    other = rows["b"]["agents/agent"]

    response = staff_a.post(
        "/admin/agents/agent/", {"action": "issue_key", "_selected_action": [other.pk]}
    )

    assert response.status_code == 302  # nothing selected that this user may see
    assert ApiKey.objects.filter(agent=other).count() == 1
    assert not AuditEvent.objects.filter(action="apikey.issue").exists()


def test_a_staff_user_issues_a_key_for_their_teams_agent(staff_a, rows):
    own = rows["a"]["agents/agent"]

    response = staff_a.post(
        "/admin/agents/agent/", {"action": "issue_key", "_selected_action": [own.pk]}
    )

    assert response.status_code == 200
    assert ApiKey.objects.filter(agent=own).count() == 2


def test_leases_belong_to_no_team_so_staff_do_not_see_them(staff_a, root, db):
    lease = Lease.objects.create(name="consolidate:1", token="t")

    assert staff_a.get("/admin/lifecycle/lease/").status_code == 403
    assert staff_a.get(f"/admin/lifecycle/lease/{lease.pk}/change/").status_code == 403
    assert root.get("/admin/lifecycle/lease/").context["cl"].result_count == 1


def test_the_admin_index_lists_no_global_backlog_to_staff(staff_a, root):
    assert 'id="embedding-backlog"' not in staff_a.get("/admin/").content.decode()
    assert 'id="embedding-backlog"' in root.get("/admin/").content.decode()


def test_every_model_is_counted(rows):
    # the fixture really made one row of each model per team, so the lists above are exact
    for model in (Team, Agent, ApiKey, Session, SessionMeta, Summary, Message, Fact, Category,
                  Entry, ErrorRecord, Learning, Run, HistoryEntry):  # fmt: skip
        assert model.objects.count() == 2, model
