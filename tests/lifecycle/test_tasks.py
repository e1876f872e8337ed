"""Triggers, tasks and the beat: what an append sets off (debounced, after commit), thin
idempotent tasks, and the sweeps that respect each agent's own settings."""

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from apps.conversations.models import Message, Session, Summary
from apps.lifecycle import tasks
from apps.lifecycle.models import HistoryEntry, Run
from memoryhub.celery import app
from tests.factories import AgentFactory
from tests.lifecycle.helpers import T0, add

pytestmark = pytest.mark.django_db


def _append(api, session, n, start=0):
    body = {"messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"}
                         for i in range(start, start + n)]}  # fmt: skip
    return api.post(f"/sessions/{session.id}/messages", body).json()


def test_an_append_past_the_thresholds_sets_off_summary_and_consolidation(
    api, agent, session, django_capture_on_commit_callbacks
):
    first = _append(api, session, 30)  # 14 left the window (< 16); 30 unconsolidated (< 50)
    with django_capture_on_commit_callbacks(execute=True):
        second = _append(api, session, 30, start=30)  # 44 left the window; 60 unconsolidated

    assert (first["lifecycle"], second["lifecycle"]) == ([], ["summary", "consolidate"])
    summary = Summary.objects.get(session=session).content
    # "mN" says nothing salient (one word): the extractive summary notes the newest line
    assert summary == f"- [{_stamp(session, 43)}] assistant: m43"
    # consolidation: from the first unconsolidated message up to the newest 25
    [entry] = HistoryEntry.objects.filter(agent=agent)
    assert entry.kind == "raw-fallback"
    assert entry.content == f"[extractive] [{_stamp(session, 34)}] 35 messages: nothing salient."
    assert Message.objects.filter(session=session, consolidated_at__isnull=True).count() == 25
    assert list(Run.objects.order_by("id").values_list("kind", "trigger", "status")) == [
        ("summary", "auto", "fallback"), ("consolidate", "auto", "fallback"),
    ]  # fmt: skip


def _stamp(session, i):
    return session.messages.get(content=f"m{i}").created_at.strftime("%Y-%m-%d %H:%M")


def test_a_burst_of_appends_enqueues_one_task(
    api, agent, session, django_capture_on_commit_callbacks
):
    agent.settings = {"max_history_messages": 1}
    agent.save()
    with django_capture_on_commit_callbacks() as sent:
        replies = [_append(api, session, 2, start=2 * i)["lifecycle"] for i in range(3)]

    assert replies == [["summary"], [], []]
    from_triggers = [cb for cb in sent if cb.__code__.co_filename.endswith("lifecycle/triggers.py")]
    assert len(from_triggers) == 1


def test_tasks_are_idempotent(agent, session):
    add(session, *[f"m{i}" for i in range(60)], role=None)

    assert tasks.consolidate_task(str(session.pk), "beat", 0) == 1
    assert tasks.consolidate_task(str(session.pk), "beat", 0) == 0  # nothing left
    assert HistoryEntry.objects.count() == 1
    assert tasks.summarize_task(str(session.pk)) == 1
    assert tasks.summarize_task(str(session.pk)) == 0
    assert tasks.consolidate_task("00000000-0000-0000-0000-000000000000") == 0  # removed


def test_the_beat_schedule_is_in_code_and_tasks_ack_late_with_time_limits():
    schedule = django_settings.CELERY_BEAT_SCHEDULE
    assert {name: (e["task"], e["schedule"], e["options"]["expires"])
            for name, e in schedule.items() if e["task"].startswith("lifecycle.")} == {
        "summarize-due": ("lifecycle.summarize_due", 600.0, 590),
        "consolidate-due": ("lifecycle.consolidate_due", 900.0, 890),
        "compact-due": ("lifecycle.compact_due", 600.0, 590),
        "compress-due": ("lifecycle.compress_due", 600.0, 590),
    }  # fmt: skip
    for name in ["summarize", "consolidate", "compact", "context", "summarize_due",
                 "consolidate_due", "compact_due", "compress", "compress_due"]:  # fmt: skip
        task = app.tasks[f"lifecycle.{name}"]
        assert (task.acks_late, task.time_limit is not None, task.soft_time_limit is not None) == (
            True, True, True,
        )  # fmt: skip


def test_the_consolidation_beat_respects_each_agents_interval(agent):
    hourly = AgentFactory(slug="hourly", settings={"consolidation_interval_hours": 1})
    daily = AgentFactory(slug="daily", settings={"consolidation_interval_hours": 24})
    sessions = {}
    for a in (hourly, daily):
        sessions[a.slug] = Session.objects.create(agent=a, key="s")
        add(sessions[a.slug], *[f"m{i}" for i in range(30)], role=None)
        Run.objects.create(agent=a, kind="consolidate", trigger="beat", status="ok",
                           created_at=timezone.now() - timedelta(hours=2))  # fmt: skip

    assert tasks.consolidate_due_task() == 1  # only the hourly agent is due

    # the session has been idle (T0 is long ago): consolidated whole, not keeping 25
    assert Message.objects.filter(agent=hourly, consolidated_at__isnull=True).count() == 0
    assert Message.objects.filter(agent=daily, consolidated_at__isnull=True).count() == 30
    assert tasks.consolidate_due_task() == 0  # the hourly agent just ran


def test_an_active_session_keeps_its_newest_messages_out_of_the_beat(agent, session):
    add(session, *[f"m{i}" for i in range(30)], role=None, start=timezone.now())

    assert tasks.consolidate_due_task() == 1

    assert Message.objects.filter(session=session, consolidated_at__isnull=True).count() == 25


def test_the_summary_and_compaction_sweeps(agent, session):
    agent.settings = {"max_history_messages": 2, "max_history_bytes": 10}
    agent.save()
    add(session, "aaaa", "bbbb", "cccc", "dddd", role=None, start=T0)
    quiet = Session.objects.create(agent=agent, key="quiet")
    add(quiet, "x", start=T0)

    assert tasks.summarize_due_task() == 1
    assert tasks.summarize_due_task() == 0  # summarised: nothing new since
    assert tasks.compact_due_task() == 1
    assert tasks.compact_due_task() == 0
    # a compaction extracts the facts of what it archives first (seed 001)
    assert list(Run.objects.order_by("id").values_list("kind", "trigger")) == [
        ("summary", "beat"), ("extract", "beat"), ("compact", "beat"),
    ]  # fmt: skip
