"""Learnings and error memory: the list with filters; editors edit a learning, an error
record's outcome, extend an error record's life or expire it now."""

from datetime import datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.agents.models import AuditEvent
from apps.agents.users import Audience
from apps.learnings.models import ErrorRecord, Learning
from apps.learnings.selectors import error_hints
from apps.learnings.services import error_record_create, errors_expire, learning_create

pytestmark = pytest.mark.django_db


def _learning(agent, content="Always quote paths with spaces", **extra):
    return learning_create(agent=agent, kind=extra.pop("kind", "error"), content=content, **extra)


def _error(agent, tool="shell", error="permission denied: /etc/shadow", **extra):
    record, _ = error_record_create(agent=agent, tool_name=tool, error=error, **extra)
    return record


def _url(name, agent, *args):
    return reverse(f"review:{name}", args=[agent.slug, *args])


def _learning_state(learning):
    row = Learning.objects.get(pk=learning.pk)
    return (row.content, row.kind, row.status)


def _error_state(record):
    row = ErrorRecord.objects.get(pk=record.pk)
    return (row.outcome, row.strategy, row.resolution, row.expires_at)


# --- the list ---


def test_learnings_send_anonymous_users_to_log_in(anon_client, agent):
    url = _url("learnings", agent)

    response = anon_client.get(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_learnings_are_404_for_another_team(outsider_client, agent):
    assert outsider_client.get(_url("learnings", agent)).status_code == 404


def test_learnings_list_every_status_and_the_live_error_records(viewer_client, agent, other_agent):
    active = _learning(agent, "Quote paths")
    pending = _learning(agent, "Prefer metric units", kind="correction", status="pending")
    archived = _learning(agent, "Old advice", status="archived")
    live = _error(agent)
    gone = _error(agent, tool="http", error="timeout")
    ErrorRecord.objects.filter(pk=gone.pk).update(expires_at=timezone.now() - timedelta(days=1))
    _learning(other_agent, "Their secret learning")

    response = viewer_client.get(_url("learnings", agent))

    assert response.status_code == 200
    assert [item.pk for item in response.context["learnings"]] == [
        archived.pk,
        pending.pk,
        active.pk,
    ]
    assert [e.pk for e in response.context["errors"]] == [live.pk]
    html = response.content.decode()
    assert "permission denied: /etc/shadow" in html
    assert "Their secret" not in html
    assert _url("learning_edit", agent, active.pk) not in html  # viewers read only


def test_learnings_filter_by_status_kind_outcome_and_text(viewer_client, agent):
    _learning(agent, "Quote paths")
    wanted = _learning(agent, "Prefer metric units", kind="correction", status="pending")
    _error(agent)
    fixed = _error(agent, tool="http", error="timeout", outcome="resolved", resolution="retry")

    by_status = viewer_client.get(_url("learnings", agent), {"status": "pending"})
    by_kind = viewer_client.get(_url("learnings", agent), {"kind": "correction"})
    by_text = viewer_client.get(_url("learnings", agent), {"q": "METRIC"})
    by_outcome = viewer_client.get(_url("learnings", agent), {"outcome": "resolved"})
    by_tool = viewer_client.get(_url("learnings", agent), {"q": "http"})
    unknown = viewer_client.get(_url("learnings", agent), {"status": "bogus"})

    for response in (by_status, by_kind, by_text):
        assert [item.pk for item in response.context["learnings"]] == [wanted.pk]
    assert [e.pk for e in by_outcome.context["errors"]] == [fixed.pk]
    assert [e.pk for e in by_tool.context["errors"]] == [fixed.pk]
    assert (unknown.status_code, len(unknown.context["learnings"])) == (200, 2)


# --- learning edit ---


def test_learning_edit_sends_anonymous_users_to_log_in(anon_client, agent):
    learning = _learning(agent)
    url = _url("learning_edit", agent, learning.pk)

    response = anon_client.get(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_learning_edit_is_404_for_another_team_or_another_agent_s_learning(
    outsider_client, editor_client, agent, other_agent
):
    learning = _learning(agent)
    theirs = _learning(other_agent)

    assert outsider_client.get(_url("learning_edit", agent, learning.pk)).status_code == 404
    assert editor_client.get(_url("learning_edit", agent, theirs.pk)).status_code == 404


def test_learning_edit_is_403_for_a_viewer_and_changes_nothing(viewer_client, agent):
    learning = _learning(agent)
    before = _learning_state(learning)
    data = {"content": "x", "kind": "correction", "status": "archived"}

    assert viewer_client.get(_url("learning_edit", agent, learning.pk)).status_code == 403
    assert viewer_client.post(_url("learning_edit", agent, learning.pk), data).status_code == 403
    assert _learning_state(learning) == before


def test_learning_edit_shows_the_form(editor_client, agent):
    learning = _learning(agent)

    response = editor_client.get(_url("learning_edit", agent, learning.pk))

    assert response.status_code == 200
    assert response.context["form"].initial == {
        "content": "Always quote paths with spaces",
        "kind": "error",
        "status": "active",
    }


def test_learning_edit_saves_and_records_an_audit_event(editor_client, editor, agent):
    learning = _learning(agent, status="pending")
    data = {"content": "Quote every path", "kind": "correction", "status": "active"}

    response = editor_client.post(_url("learning_edit", agent, learning.pk), data)

    assert (response.status_code, response["Location"]) == (302, _url("learnings", agent))
    assert _learning_state(learning) == ("Quote every path", "correction", "active")
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.object_type, event.object_id) == (
        "learning.update",
        editor,
        "learning",
        str(learning.pk),
    )
    assert event.before == {
        "kind": "error",
        "content": "Always quote paths with spaces",
        "status": "pending",
        "source": "agent",
    }
    assert event.after == {
        "kind": "correction",
        "content": "Quote every path",
        "status": "active",
        "source": "agent",
    }


def test_learning_edit_with_bad_input_is_400(editor_client, agent):
    learning = _learning(agent)
    before = _learning_state(learning)

    response = editor_client.post(
        _url("learning_edit", agent, learning.pk),
        {"content": "x", "kind": "odd", "status": "active"},
    )

    assert response.status_code == 400
    assert _learning_state(learning) == before
    assert AuditEvent.objects.count() == 0


# --- error edit ---


def test_error_edit_sends_anonymous_users_to_log_in(anon_client, agent):
    record = _error(agent)
    url = _url("error_edit", agent, record.pk)

    response = anon_client.get(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_error_edit_is_404_for_another_team(outsider_client, agent):
    record = _error(agent)

    assert outsider_client.get(_url("error_edit", agent, record.pk)).status_code == 404


def test_error_edit_is_403_for_a_viewer_and_changes_nothing(viewer_client, agent):
    record = _error(agent)
    before = _error_state(record)
    data = {"outcome": "resolved", "strategy": "", "resolution": "sudo"}

    assert viewer_client.get(_url("error_edit", agent, record.pk)).status_code == 403
    assert viewer_client.post(_url("error_edit", agent, record.pk), data).status_code == 403
    assert _error_state(record) == before


def test_error_edit_sets_the_outcome_and_records_an_audit_event(editor_client, editor, agent):
    record = _error(agent)
    data = {"outcome": "resolved", "strategy": "ran it as root", "resolution": "use sudo -u app"}

    response = editor_client.post(_url("error_edit", agent, record.pk), data)

    assert (response.status_code, response["Location"]) == (302, _url("learnings", agent))
    outcome, strategy, resolution, _expires = _error_state(record)
    assert (outcome, strategy, resolution) == ("resolved", "ran it as root", "use sudo -u app")
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.object_type, event.object_id) == (
        "error.update",
        editor,
        "errorrecord",
        str(record.pk),
    )
    assert (event.before["outcome"], event.after["outcome"]) == ("open", "resolved")
    assert event.after["resolution"] == "use sudo -u app"


def test_error_edit_of_an_expired_record_is_404(editor_client, agent):
    record = _error(agent)
    ErrorRecord.objects.filter(pk=record.pk).update(expires_at=timezone.now())

    assert editor_client.get(_url("error_edit", agent, record.pk)).status_code == 404


def test_error_edit_with_an_unknown_outcome_is_400(editor_client, agent):
    record = _error(agent)
    before = _error_state(record)

    response = editor_client.post(
        _url("error_edit", agent, record.pk), {"outcome": "maybe", "strategy": "", "resolution": ""}
    )

    assert response.status_code == 400
    assert _error_state(record) == before


# --- extend ---


def test_error_extend_sends_anonymous_users_to_log_in(anon_client, agent):
    record = _error(agent)
    url = _url("error_extend", agent, record.pk)

    response = anon_client.post(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_error_extend_is_404_for_another_team(outsider_client, agent):
    record = _error(agent)

    assert outsider_client.post(_url("error_extend", agent, record.pk)).status_code == 404


def test_error_extend_is_403_for_a_viewer(viewer_client, agent):
    record = _error(agent)
    before = _error_state(record)

    assert viewer_client.post(_url("error_extend", agent, record.pk)).status_code == 403
    assert _error_state(record) == before


def test_error_extend_pushes_the_expiry_a_ttl_from_now(editor_client, editor, agent):
    record = _error(agent)
    soon = timezone.now() + timedelta(days=1)
    ErrorRecord.objects.filter(pk=record.pk).update(expires_at=soon)

    started = timezone.now()
    response = editor_client.post(_url("error_extend", agent, record.pk))

    assert (response.status_code, response["Location"]) == (302, _url("learnings", agent))
    expires = ErrorRecord.objects.get(pk=record.pk).expires_at
    assert started + timedelta(days=90) <= expires <= timezone.now() + timedelta(days=90)
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.object_id) == ("error.extend", editor, str(record.pk))
    assert datetime.fromisoformat(event.before["expires_at"]) == soon
    assert datetime.fromisoformat(event.after["expires_at"]) == expires


# --- expire ---


def test_error_expire_sends_anonymous_users_to_log_in(anon_client, agent):
    record = _error(agent)
    url = _url("error_expire", agent, record.pk)

    response = anon_client.post(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_error_expire_is_404_for_another_team(outsider_client, agent):
    record = _error(agent)

    assert outsider_client.post(_url("error_expire", agent, record.pk)).status_code == 404
    assert ErrorRecord.objects.live().filter(pk=record.pk).exists()


def test_error_expire_is_403_for_a_viewer(viewer_client, agent):
    record = _error(agent)

    assert viewer_client.post(_url("error_expire", agent, record.pk)).status_code == 403
    assert ErrorRecord.objects.live().filter(pk=record.pk).exists()


def test_error_expire_stops_serving_the_record_and_the_sweep_deletes_it(
    editor_client, editor, agent
):
    record = _error(agent)
    assert [
        h.record.pk
        for h in error_hints(
            agent=agent, tool_name="shell", error=record.error, audience=Audience(None)
        )
    ] == [record.pk]

    response = editor_client.post(_url("error_expire", agent, record.pk))

    assert (response.status_code, response["Location"]) == (302, _url("learnings", agent))
    assert not ErrorRecord.objects.live().filter(pk=record.pk).exists()
    assert (
        error_hints(agent=agent, tool_name="shell", error=record.error, audience=Audience(None))
        == []
    )
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.object_id) == ("error.expire", editor, str(record.pk))
    assert event.before["outcome"] == "open"
    assert editor_client.post(_url("error_expire", agent, record.pk)).status_code == 404
    assert errors_expire() == 1
    assert not ErrorRecord.objects.filter(pk=record.pk).exists()
