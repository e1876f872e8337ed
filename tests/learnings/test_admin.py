"""Admins curate learnings, error memory and facts: each action, and team scoping."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import Permission, User

from apps.facts.models import Fact, FactVersion
from apps.facts.services import fact_save
from apps.learnings.models import ErrorRecord, Learning
from apps.learnings.services import error_record_create, learning_create
from tests.factories import AgentFactory, TeamFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def act(client, model, action, ids, **extra):
    return client.post(
        f"/admin/{model}/", {"action": action, "_selected_action": ids, **extra}, follow=True
    )


def test_mark_resolved_needs_and_records_a_resolution(admin_client, agent):
    record, _ = error_record_create(agent=agent, tool_name="git_push", error="rejected")

    without = act(admin_client, "learnings/errorrecord", "mark_resolved", [record.pk])
    record.refresh_from_db()
    assert record.outcome == "open"
    assert "Write the resolution first." in without.content.decode()

    act(
        admin_client,
        "learnings/errorrecord",
        "mark_resolved",
        [record.pk],
        resolution="pull --rebase then push",
    )
    record.refresh_from_db()
    assert (record.outcome, record.resolution) == ("resolved", "pull --rebase then push")


def test_extend_the_ttl_from_now(admin_client, agent):
    with time_machine.travel(T0, tick=False):
        record, _ = error_record_create(agent=agent, tool_name="t", error="e")
    with time_machine.travel(T0 + timedelta(days=80), tick=False):
        act(admin_client, "learnings/errorrecord", "extend_ttl", [record.pk])

    record.refresh_from_db()
    assert record.expires_at == T0 + timedelta(days=170)


def test_expiring_within_7_days_filter(admin_client, agent):
    with time_machine.travel(T0, tick=False):
        soon, _ = error_record_create(agent=agent, tool_name="t", error="old")
    with time_machine.travel(T0 + timedelta(days=60), tick=False):
        error_record_create(agent=agent, tool_name="t", error="new")
        page = admin_client.get("/admin/learnings/errorrecord/", {"expires": "7d"})
    with time_machine.travel(T0 + timedelta(days=85), tick=False):
        later = admin_client.get("/admin/learnings/errorrecord/", {"expires": "7d"})

    assert [r.pk for r in page.context["cl"].result_list] == []
    assert [r.pk for r in later.context["cl"].result_list] == [soon.pk]


def test_promote_resolved_and_failed_records(admin_client, agent):
    resolved, _ = error_record_create(
        agent=agent, tool_name="t", error="e1", outcome="resolved", resolution="r"
    )
    still_open, _ = error_record_create(agent=agent, tool_name="t", error="e2")

    act(admin_client, "learnings/errorrecord", "promote", [resolved.pk, still_open.pk])

    assert list(Learning.objects.values_list("error_record_id", "source", "status")) == [
        (resolved.pk, "admin", "active")
    ]


def test_approve_pending_and_archive_learnings(admin_client, agent):
    pending = learning_create(
        agent=agent, kind="correction", content="Metric units.", source="consolidation"
    )
    active = learning_create(agent=agent, kind="error", content="grep -a")

    act(admin_client, "learnings/learning", "approve", [pending.pk])
    act(admin_client, "learnings/learning", "archive", [active.pk])

    assert dict(Learning.objects.values_list("pk", "status")) == {
        pending.pk: "active",
        active.pk: "archived",
    }


def test_approve_a_pending_fact_and_merge_two_duplicates(admin_client, agent):
    pending = fact_save(agent=agent, content="Lives in Lyon", category="home").fact
    Fact.objects.filter(pk=pending.pk).update(status="pending")
    first = fact_save(agent=agent, content="Has a cat called Whiskerino", category="pets").fact
    second = fact_save(agent=agent, content="The cat's name: Whiskerino", category="animals").fact

    act(admin_client, "facts/fact", "approve", [pending.pk])
    act(admin_client, "facts/fact", "merge", [first.pk, second.pk])

    pending.refresh_from_db()
    assert pending.status == "active"
    assert FactVersion.objects.filter(fact=pending).last().reason == "approved"
    second.refresh_from_db()
    assert (second.valid_to is not None, second.superseded_by_id) == (True, first.pk)
    kept = list(FactVersion.objects.filter(fact=first).values_list("number", "new_value", "reason"))
    assert kept == [
        (1, "Has a cat called Whiskerino", "created"),
        (2, "The cat's name: Whiskerino", f"merged from #{second.pk}: created"),
        (3, "Has a cat called Whiskerino", f"merged #{second.pk} into this fact"),
    ]
    assert FactVersion.objects.filter(fact=second).count() == 2  # its own history stays too


def test_a_pending_fact_is_not_recalled_until_approved(api, agent):
    fact = fact_save(agent=agent, content="Lives in Lyon", category="home").fact
    Fact.objects.filter(pk=fact.pk).update(status="pending")

    recalled = api.post("/memory/recall", {"query": "Lyon"}).json()["items"]
    searched = api.post("/memory/search", {"query": "Lyon"}).json()["items"]

    assert (recalled, searched) == ([], [])


@pytest.fixture
def outsider(client):
    """A staff user of another team, allowed to view and change every model involved."""
    user = User.objects.create_user("olga", password="pw", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label__in=["learnings", "facts"])
    )
    TeamFactory(name="other-team").members.add(user)
    AgentFactory(slug="olgas-bot", team=TeamFactory(name="other-team"))
    client.force_login(user)
    return client


def test_a_staff_user_of_another_team_sees_none_of_these_rows(outsider, agent):
    record, _ = error_record_create(agent=agent, tool_name="git_push", error="rejected")
    learning = learning_create(agent=agent, kind="error", content="secret")

    errors = outsider.get("/admin/learnings/errorrecord/")
    learnings = outsider.get("/admin/learnings/learning/")

    assert (errors.status_code, learnings.status_code) == (200, 200)
    assert errors.context["cl"].result_count == 0
    assert learnings.context["cl"].result_count == 0
    assert outsider.get(f"/admin/learnings/errorrecord/{record.pk}/change/").status_code == 302
    assert outsider.get(f"/admin/learnings/learning/{learning.pk}/change/").status_code == 302
    act(outsider, "learnings/learning", "archive", [learning.pk])
    act(outsider, "learnings/errorrecord", "extend_ttl", [record.pk])
    assert Learning.objects.get().status == "active"
    assert "git_push" not in errors.content.decode()
    assert "alice-bot" not in learnings.content.decode()  # not even in the agent filter
    assert ErrorRecord.objects.get().expires_at == record.expires_at


def test_a_member_sees_their_teams_rows(client, agent):
    user = User.objects.create_user("tom", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="learnings"))
    agent.team.members.add(user)
    client.force_login(user)
    learning_create(agent=agent, kind="error", content="visible")

    assert client.get("/admin/learnings/learning/").context["cl"].result_count == 1
