"""Seed 001's AGENTS.md, "fleet-wide agent descriptions (loaded into system prompt)": one per
team, edited by people in the admin (audited), read by the team's agents, in get_context
before an agent's own AGENTS.md. Agents of other teams never see it."""

import io
import tarfile

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from apps.agents.models import AuditEvent, Membership
from apps.entries.models import Entry
from apps.entries.services import entry_add
from tests.factories import AgentFactory, SessionFactory, TeamFactory, issue_key
from tests.support.client import ApiClient

pytestmark = pytest.mark.django_db

FLEET = "# Fleet\n- alice-bot: plans trips\n- bob-bot: books them"


@pytest.fixture
def fleet(agent):
    agent.team.agents_md = FLEET
    agent.team.save()
    return agent.team


@pytest.fixture
def teammate(fleet):
    return AgentFactory(slug="bob-bot", team=fleet)


def _api(agent) -> ApiClient:
    return ApiClient(key=issue_key(agent), client=Client())


def _documents(agent) -> list[tuple[str, str]]:
    session = SessionFactory(agent=agent)
    body = _api(agent).post("/context", {"session_id": str(session.id)}).json()
    return [(p["name"], p["content"]) for p in body["system"]["parts"] if p["kind"] == "document"]


def test_every_agent_of_the_team_gets_the_team_agents_md_and_its_own_adds_to_it(
    agent, teammate, other_agent
):
    entry_add(agent=agent, name="AGENTS.md", content="I am alice-bot: I only plan.")
    entry_add(agent=agent, name="SOUL.md", content="Calm.")

    assert _documents(agent) == [
        ("SOUL.md", "Calm."),
        ("team/AGENTS.md", FLEET),
        ("AGENTS.md", "I am alice-bot: I only plan."),
    ]
    assert _documents(teammate) == [("team/AGENTS.md", FLEET)]
    assert other_agent.team != agent.team
    assert _documents(other_agent) == []  # neither the team's nor alice-bot's


def test_agents_read_their_own_teams_agents_md_only(api, other_api, fleet):
    assert api.get("/team/AGENTS.md").json() == {
        "team": fleet.name,
        "name": "team/AGENTS.md",
        "content": FLEET,
    }
    theirs = other_api.get("/team/AGENTS.md").json()
    assert (theirs["team"] != fleet.name, theirs["content"]) == (True, "")


def test_agents_cannot_write_it_as_an_entry(api, fleet):
    response = api.post("/entries", {"name": "team/AGENTS.md", "content": "# mine now"})

    assert response.status_code == 422
    assert not Entry.objects.filter(name="team/AGENTS.md").exists()


def _team_form(team, agents_md: str) -> dict:
    return {
        "name": team.name,
        "agents_md": agents_md,
        "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0", "memberships-MAX_NUM_FORMS": "1000",
        "agents-TOTAL_FORMS": "0", "agents-INITIAL_FORMS": "0",
        "agents-MIN_NUM_FORMS": "0", "agents-MAX_NUM_FORMS": "1000",
    }  # fmt: skip


def test_a_superuser_edits_it_in_the_admin_and_the_change_is_audited(agent, fleet):
    root = Client()
    root.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))

    response = root.post(f"/admin/agents/team/{fleet.pk}/change/", _team_form(fleet, "# New"))

    assert response.status_code == 302
    fleet.refresh_from_db()
    assert fleet.agents_md == "# New"
    [event] = AuditEvent.objects.filter(action="team.update")
    assert (event.username, event.object_id, event.before, event.after) == (
        "root",
        str(fleet.pk),
        {"agents_md": FLEET},
        {"agents_md": "# New"},
    )


def test_a_team_admin_edits_their_team_only(agent, fleet):
    other_team = TeamFactory(name="elsewhere")
    staff = User.objects.create_user("tara", password="pw", is_staff=True)
    staff.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_team", "change_team"])
    )
    Membership.objects.create(team=fleet, user=staff, role="editor")
    client = Client()
    client.force_login(staff)

    mine = client.post(f"/admin/agents/team/{fleet.pk}/change/", _team_form(fleet, "# Ours"))
    client.post(f"/admin/agents/team/{other_team.pk}/change/", _team_form(other_team, "# Hijack"))

    assert mine.status_code == 302
    fleet.refresh_from_db()
    other_team.refresh_from_db()
    assert (fleet.agents_md, other_team.agents_md) == ("# Ours", "")


def test_an_oversized_agents_md_is_refused_in_the_admin(agent, fleet):
    root = Client()
    root.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))

    response = root.post(
        f"/admin/agents/team/{fleet.pk}/change/", _team_form(fleet, "x" * (64 * 1024 + 1))
    )

    assert response.status_code == 200
    assert "the limit is 65536" in response.content.decode()
    fleet.refresh_from_db()
    assert fleet.agents_md == FLEET


def test_the_workspace_export_carries_it_and_an_import_skips_it(api, agent, fleet):
    exported = api.get("/workspace/export").content
    with tarfile.open(fileobj=io.BytesIO(exported), mode="r:gz") as tar:
        member = tar.extractfile("team/AGENTS.md")
        assert member is not None
        assert member.read().decode() == FLEET

    fresh = AgentFactory(slug="carol-bot")
    response = _api(fresh).post("/workspace/import", raw=exported)

    assert response.status_code == 201, response.content
    assert not Entry.objects.filter(agent=fresh).exists()
    assert fresh.team.agents_md == ""
