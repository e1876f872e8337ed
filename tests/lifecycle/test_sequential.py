"""Seed 004's sequential queue: two consolidations of one agent never interleave, whatever
triggers them at once; each one sees the MEMORY.md the previous one wrote."""

import itertools
import json
import re
import threading
import time

import pytest
from django.db import connection
from django.test import Client

from apps.conversations.models import Session
from apps.entries.models import Entry
from apps.lifecycle import tasks
from apps.lifecycle.models import HistoryEntry
from tests.factories import issue_key
from tests.lifecycle.helpers import add, prompt, use_llm
from tests.support.client import ApiClient
from tests.support.llm_server import Completion, Reply

N = 4


def _slow_model(body):
    """Takes 0.3 s, then adds a line naming the conversation to the memory it was given."""
    time.sleep(0.3)
    text = prompt(body)
    memory = re.search(r"## Current Long-term Memory\n(.*?)\n\n## Conversation", text, re.S)
    current = "" if memory.group(1) == "(empty)" else memory.group(1)
    who = re.search(r"user: (session \d)", text).group(1)
    update = (current + "\n" if current else "") + f"- {who}"
    return Completion(json.dumps({"history_entry": f"[x] {who}", "memory_update": update}))


@pytest.mark.django_db(transaction=True)
def test_concurrent_triggers_consolidate_one_after_another(settings, llm_server, agent):
    use_llm(settings, llm_server)
    sessions = []
    for i in range(N):
        sessions.append(Session.objects.create(agent=agent, key=f"s{i}"))
        add(sessions[-1], f"session {i}", "ok", role=None)
    llm_server.script(Reply(_slow_model, repeat=True))
    key = issue_key(agent)
    errors: list = []

    def via_api(session):
        try:
            response = ApiClient(key=key, client=Client()).post(
                f"/sessions/{session.id}/consolidate"
            )
            assert response.status_code == 200, response.content
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    def via_task(session):
        try:
            tasks.consolidate_task(str(session.pk), "beat", 0)
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=via_api if i % 2 else via_task, args=(s,))
               for i, s in enumerate(sessions)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert errors == []
    calls = sorted((a.request.received_at, a.at) for a in llm_server.answered)
    assert len(calls) == N
    # no call starts before the previous one has been answered
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(calls))
    memory = Entry.objects.get(agent=agent, name="MEMORY.md").content
    assert sorted(memory.splitlines()) == [f"- session {i}" for i in range(N)]
    assert HistoryEntry.objects.filter(agent=agent).count() == N
