"""A worker killed (kill -9) in the middle of a consolidation: after the retry there is
exactly one history entry.

The worker dies while the model holds its request, so nothing was written and the agent's
lease is left to expire. The retry is the broker's where the broker has one: Redis delivers
the unacknowledged task again after its visibility timeout. kombu's filesystem broker (the
embedded default) forgets a message once a worker took it; there the consolidation beat
is the retry.
"""

import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from apps.conversations.models import Message
from apps.lifecycle import tasks
from apps.lifecycle.models import HistoryEntry, Lease, Run
from memoryhub.celery import app
from tests.lifecycle.helpers import add, use_llm
from tests.support.celery_process import WorkerProcess
from tests.support.llm_server import Completion, Gate

CLEAN = '{"history_entry": "[2026-01-05 09:00] Tea.", "memory_update": "- likes tea"}'
TIMEOUT = 5  # the agent's consolidation timeout: the lease outlives it by MARGIN
MARGIN = 1


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_consolidation_leaves_one_history_entry(
    settings, llm_server, agent, session, tmp_path
):
    settings.MEMORYHUB_LIFECYCLE_LEASE_MARGIN_SECONDS = MARGIN
    settings.MEMORYHUB_LLM_BACKGROUND_TIMEOUT = TIMEOUT  # the lease outlives a background call
    use_llm(settings, llm_server)  # the beat's retry runs here, in the test process
    agent.settings = {"consolidation_timeout_seconds": TIMEOUT}
    agent.save()
    add(session, "I like tea.", "Noted.", role=None)
    gate = Gate(then=Completion(CLEAN))
    llm_server.script(gate, Completion(CLEAN))
    redis = django_settings.CELERY_BROKER_URL.startswith("redis")
    env = {
        "MEMORYHUB_LLM_URL": llm_server.url,
        "MEMORYHUB_LLM_MODEL": "test-model",
        "MEMORYHUB_LIFECYCLE_LEASE_MARGIN_SECONDS": str(MARGIN),
        "MEMORYHUB_LLM_BACKGROUND_TIMEOUT": str(TIMEOUT),
        "CELERY_BROKER_VISIBILITY_TIMEOUT": "2",
    }
    log = Path(tmp_path) / "workers.log"
    first = WorkerProcess(env=env, log=log)
    second = None
    try:
        # given a consolidation in flight in a real worker
        app.conf.task_always_eager = False
        try:
            tasks.consolidate_task.delay(str(session.pk), "auto", 0)
        finally:
            app.conf.task_always_eager = True
        assert gate.entered.wait(60), log.read_text()

        # when the worker is killed before the model answers
        first.kill()
        assert HistoryEntry.objects.count() == 0
        lease = Lease.objects.get(name=f"consolidate:{agent.pk}")
        assert lease.until > timezone.now()  # held by the dead worker, left to expire

        # then the retry writes the entry, once
        if redis:
            time.sleep(2.5)  # past the visibility timeout: the next worker takes it back
            second = WorkerProcess(env=env, log=log)
        else:
            _wait(lambda: Lease.objects.get(pk=lease.pk).until <= timezone.now(), 30, "lease")
            assert tasks.consolidate_due_task() == 1  # eager: the beat's consolidation
        _wait(lambda: HistoryEntry.objects.count() >= 1, 60, "the retry's history entry")
        if second is not None:
            time.sleep(3)  # a duplicate delivery would have written by now
    finally:
        first.stop()
        if second is not None:
            second.stop()
        gate.open()

    assert list(HistoryEntry.objects.values_list("kind", "content")) == [
        ("ok", "[2026-01-05 09:00] Tea.")
    ]
    assert set(Message.objects.values_list("consolidation", flat=True)) == {"ok"}
    runs = list(Run.objects.values_list("kind", "status"))
    assert runs == [("consolidate", "ok")]  # the killed attempt wrote nothing, not even a run
    assert len(llm_server.chats) == 2
