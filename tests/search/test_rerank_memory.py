"""Reranking in /memory/search: facts and history entries keep token states like messages,
so memory search ranks with the same stage as /search (apps/search/hybrid.py). The test
embedder (HashEmbedder) keeps one hashed row per word."""

import numpy as np
import pytest

from apps.agents.services import agent_update_settings
from apps.facts.models import Fact, FactTokens
from apps.facts.services import fact_delete, fact_save, fact_update
from apps.lifecycle.models import HistoryEntryTokens
from apps.lifecycle.services.history import history_import
from apps.providers.embeddings.fake import TOKEN_DIMS, _words
from apps.providers.embeddings.token_embedder import quantise
from apps.search.tasks import embed_pending_task
from tests.memory.helpers import BROKEN, use_embedder

pytestmark = pytest.mark.django_db

SPACE = f"fake-hash/words{TOKEN_DIMS}@int8"
# The words case of tests/search/test_rerank.py, as facts: BM25 and the hashed vectors favour
# the value repeating one query word, the per-word MaxSim the values holding more of them.
VALUES = [
    "violin violin violin practice every morning",
    "Tickets for the violin concert in Lisbon are sold out.",
    "Lisbon Lisbon, what a lovely old city",
    "The concert was loud and the concert was long.",
]
QUERY = "violin concert tickets Lisbon"


def _codes(row) -> np.ndarray:
    return np.frombuffer(bytes(row.codes), dtype=np.int8).reshape(row.count, -1)


def _save(agent, value: str) -> Fact:
    return fact_save(agent=agent, content=value, category="music").fact


def _memory_search(api):
    response = api.post("/memory/search", {"query": QUERY, "k": 20})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_saved_fact_keeps_the_states_of_its_value(agent):
    fact = _save(agent, "The user plays the violin")

    [row] = FactTokens.objects.all()
    assert (row.fact_id, row.space, row.count) == (fact.pk, SPACE, 5)
    assert np.array_equal(_codes(row), quantise(_words("The user plays the violin")))


def test_a_new_value_replaces_the_states_and_deleting_the_fact_drops_them(agent):
    fact = _save(agent, "The user plays the violin")

    fact_update(agent=agent, fact=fact, changed_by="user", value="The user plays cello now")
    [row] = FactTokens.objects.all()
    assert np.array_equal(_codes(row), quantise(_words("The user plays cello now")))

    fact_delete(agent=agent, fact=Fact.objects.get(pk=fact.pk))
    assert FactTokens.objects.count() == 0


def test_a_value_not_embedded_yet_never_keeps_the_old_values_states(agent, embed_now):
    # given: a fact with states, then an edit made inside a transaction (the admin's path)
    fact = _save(agent, "The user plays the violin")

    fact_update(agent=agent, fact=fact, changed_by="user", value="cello", embed_now=False)

    # then: the old value's states are gone at once; the pipeline makes the new ones
    assert FactTokens.objects.count() == 0
    with embed_now():
        embed_pending_task()
    [row] = FactTokens.objects.all()
    assert np.array_equal(_codes(row), quantise(_words("cello")))


def test_a_fact_saved_while_the_embedder_fails_gets_states_from_the_sweep(
    settings, agent, embed_now
):
    use_embedder(settings, BROKEN)
    fact = _save(agent, "The user plays the violin")
    assert (fact.embedding, FactTokens.objects.count()) == (None, 0)

    settings.MEMORYHUB_PROVIDERS = {
        "embedding": {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}},
        "llm": None,
    }
    with embed_now():
        embed_pending_task()

    [row] = FactTokens.objects.all()
    assert (row.fact_id, row.space, row.count) == (fact.pk, SPACE, 5)


def test_history_entries_keep_states_when_embedded(agent, embed_now):
    files = {
        "memory/HISTORY-2026-11.md": "## 2026-11-02T10:00:00.000Z\nThe user booked Lisbon tickets\n"
    }
    with embed_now():
        assert history_import(agent=agent, files=files) == 1

    [row] = HistoryEntryTokens.objects.all()
    assert (row.space, row.count) == (SPACE, 5)
    assert np.array_equal(_codes(row), quantise(_words("The user booked Lisbon tickets")))


def test_memory_search_reranks_facts_as_search_reranks_messages(api, agent):
    # given the same memory search with reranking off, then on (the default)
    for value in VALUES:
        _save(agent, value)
    agent_update_settings(agent=agent, changes={"rerank": False})
    fused = _memory_search(api)
    agent_update_settings(agent=agent, changes={"rerank": None})

    reranked = _memory_search(api)

    # then: the same facts, nothing added or lost, reordered as /search reorders these texts
    violin, tickets, lisbon, loud = VALUES
    assert [i["content"] for i in fused["items"]] == [tickets, violin, lisbon, loud]
    assert [i["content"] for i in reranked["items"]] == [tickets, lisbon, violin, loud]
    assert all("rerank" not in i["legs"] for i in fused["items"])
    assert all(isinstance(i["legs"]["rerank"], float) for i in reranked["items"])
    assert (fused["degraded"], reranked["degraded"]) == ([], [])


def test_memory_search_never_reranks_in_another_agents_facts(api, other_api, agent, other_agent):
    for value in VALUES:
        _save(other_agent, value)
    _save(agent, "Lisbon concert tickets for the violin recital")

    mine = _memory_search(api)["items"]
    theirs = _memory_search(other_api)["items"]

    assert [i["content"] for i in mine] == ["Lisbon concert tickets for the violin recital"]
    assert sorted(i["content"] for i in theirs) == sorted(VALUES)
    assert FactTokens.objects.filter(fact__agent=agent).count() == 1
