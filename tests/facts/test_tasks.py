"""Fact tasks: late embedding (eagerly, and through a real broker and worker) and decay."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.facts.models import Category, Fact
from apps.facts.services import fact_save
from apps.facts.tasks import refresh_salience_task
from apps.search.tasks import embed_pending_task
from memoryhub.celery import app
from tests.memory.helpers import BROKEN, HASH, use_embedder
from tests.support.llm_server import Status


@pytest.mark.django_db
def test_pending_facts_are_embedded_when_the_embedder_is_back(agent, settings):
    use_embedder(settings, BROKEN)
    fact = fact_save(agent=agent, content="Lives in Berlin", category="profile").fact
    use_embedder(settings, HASH)

    result = embed_pending_task.delay().get()

    # the sweep enqueued the fact and its new category, whose name failed to embed too
    fact.refresh_from_db()
    category = Category.objects.get(pk=fact.category_id)
    assert (result, fact.embedding_model, fact.embedding_error) == (2, "fake-hash@384", "")
    assert (category.name, category.embedding_model, category.embedding_error) == (
        "profile", "fake-hash@384", "",
    )  # fmt: skip


@pytest.mark.django_db
def test_refresh_salience_applies_decay(agent):
    fact = fact_save(agent=agent, content="x", category="c", importance=0.8).fact
    Fact.objects.filter(pk=fact.pk).update(created_at=timezone.now() - timedelta(days=2))

    assert refresh_salience_task.delay().get() == 1

    fact.refresh_from_db()
    assert round(fact.salience, 6) == round(0.8 * 0.95**2, 6)


@pytest.fixture
def tasks_to_broker():
    """.delay() publishes to the broker even before a worker runs (test settings run inline)."""
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


@pytest.mark.django_db(transaction=True)
@pytest.mark.celery_worker
def test_worker_retries_a_failed_fact_embedding_until_the_server_answers(
    settings, llm_server, api, request, tasks_to_broker
):
    # given an embedding server that fails the save (the fact, then the "general" category)
    settings.MEMORYHUB_PROVIDERS = {
        **settings.MEMORYHUB_PROVIDERS,
        "embedding": {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {"URL": llm_server.url, "MODEL": "remote-embed", "DIMENSIONS": 384},
        },
    }
    settings.MEMORYHUB_EMBEDDING_RETRY_SECONDS = 0.2
    llm_server.script(Status(500, "down"), Status(500, "down"))
    # No worker yet: the embedding task queued on commit waits in the broker meanwhile.
    text = "The sandbox deploy key rotates weekly"

    saved = api.post("/memory/save", {"content": text}).json()

    # then the fact is stored with its error
    fact = Fact.objects.get(pk=saved["fact"]["id"])
    assert (saved["action"], saved["fact"]["embedded"], fact.embedding) == ("created", False, None)
    assert "500" in fact.embedding_error
    # and keyword search finds it, the vector leg does not (no vector yet)
    found = api.post("/memory/search", {"query": "sandbox deploy key"}).json()["items"]
    assert [(h["id"], sorted(h["legs"])) for h in found if h["source"] == "fact"] == [
        (fact.pk, ["bm25"])
    ]
    # and exact dedup finds it
    again = api.post("/memory/save", {"content": "the sandbox deploy key rotates weekly!"}).json()
    assert (again["action"], again["existing_id"]) == ("reinforced", fact.pk)
    # but semantic recall cannot yet
    assert api.post("/memory/recall", {"query": text}).json()["items"] == []

    # when the worker starts and the server fails the first attempt of both tasks (the fact's
    # and its new category's: both failed at save time)
    # (and the day's log, an entry the save appended to, embedded in the same sweep: issue 41)
    llm_server.script(*[Status(500, "still down")] * 3)
    request.getfixturevalue("celery_worker")

    # then the tasks retry through the broker and the second attempts succeed
    category = Category.objects.get(name="general")
    deadline = time.monotonic() + 30  # a safety net against a hang, not a speed assertion
    while time.monotonic() < deadline:
        fact.refresh_from_db()
        category.refresh_from_db()
        if fact.embedding is not None and category.embedding is not None:
            break
        time.sleep(0.05)
    assert (fact.embedding_model, fact.embedding_error, fact.embedding_attempts) == (
        "remote-embed@384", "", 2,
    )  # fmt: skip
    assert (category.embedding_model, category.embedding_error, category.embedding_attempts) == (
        "remote-embed@384", "", 2,
    )  # fmt: skip
    inputs = [r.body["input"] for r in llm_server.requests]
    assert inputs[:5] == [
        [text], ["general"],  # the save
        ["sandbox deploy key"], ["the sandbox deploy key rotates weekly!"], [text],  # the checks
    ]  # fmt: skip
    # the worker: each task failed once, then retried (the two tasks may interleave)
    logged = [i for i in inputs[5:] if i[0].startswith("# ")]
    assert len(logged) == 2  # the day's log: failed once, then embedded
    rest = [i for i in inputs[5:] if i not in logged]
    assert sorted(rest) == sorted([["general"], ["general"], [text], [text]])
    # and memory_recall finds it
    recalled = api.post("/memory/recall", {"query": text}).json()
    assert [(h["fact"]["id"], h["tier"], round(h["similarity"], 6)) for h in recalled["items"]] == [
        (fact.pk, "flat", 1.0)
    ]
