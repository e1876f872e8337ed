"""No provider call inside a transaction, tried as a user would: while a memory_save waits on
the embeddings server, the agent's other writes go through (both backends).

The server holds the save's embedding request at a Gate; everything below must complete
before the gate opens. A save that held the database's write lock (SQLite) or the agent's
row lock (PostgreSQL) during the HTTP call would block them until the gate's safety timeout.
"""

import threading

import pytest
from django.db import connection
from django.test import Client

from apps.facts.models import Fact
from tests.support.client import ApiClient
from tests.support.llm_server import Gate

pytestmark = pytest.mark.django_db(transaction=True)


def _remote(settings, llm_server):
    settings.MEMORYHUB_PROVIDERS = {
        **settings.MEMORYHUB_PROVIDERS,
        "embedding": {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {"URL": llm_server.url, "MODEL": "remote-embed", "DIMENSIONS": 384},
        },
    }


def test_writes_go_through_while_a_save_waits_on_the_embedder(settings, llm_server, api, session):
    # given a fact in "profile", and an embeddings server that holds the next request
    _remote(settings, llm_server)
    existing = api.post("/memory/save", {"content": "Lives in Berlin", "category": "profile"})
    assert existing.status_code == 200
    fact_id = existing.json()["fact"]["id"]
    gate = Gate()
    llm_server.script(gate)

    # when a save of a new fact (same category: one embedding, the value) starts
    saved = {}

    def save() -> None:
        try:
            client = ApiClient(key=api.key, client=Client())
            saved["response"] = client.post(
                "/memory/save", {"content": "Works at the harbour", "category": "profile"}
            )
        finally:
            connection.close()

    thread = threading.Thread(target=save)
    thread.start()
    assert gate.entered.wait(10)

    # then, while its embedding is in flight, the agent appends, edits a fact and recalls
    append = api.post(
        "/sessions/chat-1/messages", {"messages": [{"role": "user", "content": "hi"}]}
    )
    edit = api.patch(f"/facts/{fact_id}", {"importance": 0.9})
    recall = api.post("/memory/recall", {"query": "Berlin"})
    statuses = [append.status_code, edit.status_code, recall.status_code]
    held = not gate.released.is_set()
    gate.open()
    thread.join(30)

    assert (statuses, held) == ([201, 200, 200], True)
    assert saved["response"].status_code == 200
    assert saved["response"].json()["action"] == "created"
    assert Fact.objects.get(pk=fact_id).importance == 0.9
    inputs = [r.body["input"] for r in llm_server.requests]
    # each save also appends to the daily log, an entry, embedded after commit (issue 41)
    daily = [i for i in inputs if i[0].startswith("# ")]
    assert [i for i in inputs if i not in daily] == [
        ["Lives in Berlin"], ["profile"],  # the first save: value, new category's name
        ["Works at the harbour"],  # the held save
        ["hi"],  # the appended message, embedded after commit (tasks run eagerly here)
        ["Berlin"],  # the recall's query
    ]  # fmt: skip
    assert len(daily) == 2
    assert "Works at the harbour" in daily[-1][0]
