"""Every change made in the admin is an audit event: who, what, before and after."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from apps.agents.models import Agent, AuditEvent
from apps.agents.services import api_key_issue
from apps.learnings.models import Learning
from apps.learnings.services import learning_create
from tests.factories import AgentFactory, MessageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db):
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def _events():
    return list(
        AuditEvent.objects.order_by("id").values_list(
            "username", "source", "action", "object_type", "object_id", "agent__slug", "before",
            "after",
        )
    )  # fmt: skip


def test_a_save_records_the_changed_fields_before_and_after(root, session):
    message = MessageFactory(session=session, content="hi", importance=0.5)

    response = root.post(
        f"/admin/conversations/message/{message.pk}/change/", {"importance": "0.9"}
    )

    assert response.status_code == 302
    assert _events() == [
        ("root", "admin", "message.update", "message", str(message.pk), "alice-bot",
         {"importance": 0.5}, {"importance": 0.9}),
    ]  # fmt: skip


def test_a_save_without_changes_records_nothing(root, session):
    message = MessageFactory(session=session, importance=0.5)

    root.post(f"/admin/conversations/message/{message.pk}/change/", {"importance": "0.5"})

    assert _events() == []


def test_an_addition_records_the_new_row(root, agent):
    response = root.post(
        "/admin/learnings/learning/add/",
        {"agent": agent.pk, "kind": "error", "content": "grep -a", "status": "active"},
    )

    learning = Learning.objects.get()
    assert response.status_code == 302
    ((user, source, action, kind, pk, slug, before, after),) = _events()
    assert (user, source, action, kind, pk, slug, before) == (
        "root", "admin", "learning.create", "learning", str(learning.pk), "alice-bot", None,
    )  # fmt: skip
    assert (after["content"], after["status"], after["source"]) == ("grep -a", "active", "admin")


def test_a_deletion_records_the_row_as_it_was(root, agent):
    learning = learning_create(agent=agent, kind="error", content="obsolete")

    response = root.post(f"/admin/learnings/learning/{learning.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not Learning.objects.exists()
    ((_, _, action, _, pk, slug, before, after),) = _events()
    assert (action, pk, slug, after) == ("learning.delete", str(learning.pk), "alice-bot", None)
    assert before["content"] == "obsolete"


def test_delete_selected_records_one_event_per_row(root, agent):
    first = learning_create(agent=agent, kind="error", content="one")
    second = learning_create(agent=agent, kind="error", content="two")

    root.post(
        "/admin/learnings/learning/",
        {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"},
    )

    assert sorted((e[2], e[4]) for e in _events()) == sorted(
        [("learning.delete", str(first.pk)), ("learning.delete", str(second.pk))]
    )


def test_deleting_an_agent_keeps_its_event(root):
    doomed = AgentFactory(slug="doomed")

    root.post(f"/admin/agents/agent/{doomed.pk}/delete/", {"post": "yes"})

    assert not Agent.objects.filter(slug="doomed").exists()
    ((_, _, action, _, pk, slug, before, _),) = _events()
    assert (action, pk, slug, before["slug"]) == ("agent.delete", str(doomed.pk), None, "doomed")


def test_an_action_records_what_it_changed(root, agent):
    pending = learning_create(agent=agent, kind="correction", content="m", source="consolidation")
    already = learning_create(agent=agent, kind="error", content="a")

    root.post(
        "/admin/learnings/learning/",
        {"action": "approve", "_selected_action": [pending.pk, already.pk]},
    )

    events = [(e[2], e[4], e[6], e[7]) for e in _events()]
    assert [e[:3] for e in events] == [("learning.approve", str(pending.pk), {"status": "pending"})]
    assert events[0][3]["status"] == "active"


def test_revoking_and_issuing_keys_are_recorded(root, agent):
    issued = api_key_issue(agent=agent)

    root.post(
        "/admin/agents/apikey/", {"action": "revoke", "_selected_action": [issued.api_key.pk]}
    )
    root.post("/admin/agents/agent/", {"action": "issue_key", "_selected_action": [agent.pk]})

    (revoke, issue) = _events()
    assert revoke[2:7] == ("apikey.revoke", "apikey", str(issued.api_key.pk), "alice-bot",
                           {"revoked_at": None})  # fmt: skip
    assert revoke[7]["revoked_at"] is not None
    assert issue[2:6] == ("apikey.issue", "apikey", issue[4], "alice-bot")
    assert issue[4] != str(issued.api_key.pk)
    assert set(issue[7]) == {"prefix", "name", "created_at"}  # never the key or its hash


def test_an_inline_membership_is_recorded(root, agent):
    member = User.objects.create_user("vera", password="pw")
    team = agent.team

    response = root.post(
        f"/admin/agents/team/{team.pk}/change/",
        {"name": team.name, "created_at_0": "2026-01-01", "created_at_1": "00:00:00",
         "memberships-TOTAL_FORMS": "1", "memberships-INITIAL_FORMS": "0",
         "memberships-MIN_NUM_FORMS": "0", "memberships-MAX_NUM_FORMS": "1000",
         "memberships-0-user": member.pk, "memberships-0-role": "editor",
         "memberships-0-team": team.pk,
         "agents-TOTAL_FORMS": "1", "agents-INITIAL_FORMS": "1",
         "agents-MIN_NUM_FORMS": "0", "agents-MAX_NUM_FORMS": "1000",
         "agents-0-id": agent.pk, "agents-0-team": team.pk, "agents-0-slug": agent.slug,
         "agents-0-name": agent.name},
    )  # fmt: skip

    assert response.status_code == 302
    ((_, _, action, kind, _, slug, before, after),) = [e for e in _events() if e[3] == "membership"]
    assert (action, kind, slug, before) == ("membership.create", "membership", None, None)
    assert (after["user"], after["role"], after["team"]) == (member.pk, "editor", team.pk)
