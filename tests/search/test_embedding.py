"""Background embedding: after commit, failures recorded and retried, sweep, re-embed."""

import time

import pytest
from django.core.management import call_command

from apps.conversations.models import Message
from apps.search.tasks import embed_pending_task
from tests.search.conftest import add, archive_all
from tests.support.llm_server import Status

MINILM = {"CLASS": "apps.providers.embeddings.minilm.MiniLMEmbedder", "CONFIG": {}}


def _remote(settings, llm_server, **extra):
    settings.MEMORYHUB_PROVIDERS = {
        **settings.MEMORYHUB_PROVIDERS,
        "embedding": {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {"URL": llm_server.url, "MODEL": "remote-embed", "DIMENSIONS": 384},
        },
    }


@pytest.mark.django_db
def test_nothing_is_embedded_in_the_request_only_after_commit(api, session):
    r = api.post("/sessions/chat-1/messages", {"messages": [{"role": "user", "content": "hi"}]})

    assert r.status_code == 201
    # the test transaction never commits, so the after-commit task has not run
    assert list(Message.objects.values_list("embedding_model", "embedding_attempts")) == [("", 0)]


@pytest.mark.django_db
def test_after_commit_embeds_with_the_model_label(session, embed_now):
    with embed_now():
        rows = add(session, "hello", "world", name="Ann")

    stored = Message.objects.get(pk=rows[0].pk)
    assert stored.embedding_model == "fake-hash@384"
    assert stored.embedding.shape == (384,)
    assert stored.embedding_error == ""
    # the participant name is embedded with the content
    from apps.providers.embeddings.fake import HashEmbedder

    assert stored.embedding.tolist() == pytest.approx(HashEmbedder().embed(["Ann: hello"])[0])


@pytest.mark.django_db
def test_new_messages_are_embedded_in_task_sized_batches(settings, llm_server, session, embed_now):
    _remote(settings, llm_server)
    settings.MEMORYHUB_EMBEDDING_BATCH_SIZE = 2

    with embed_now():
        add(session, "one", "two", "three", "four", "five")

    batches = [r.body["input"] for r in llm_server.requests]
    assert batches == [["one", "two"], ["three", "four"], ["five"]]
    assert Message.objects.filter(embedding_model="remote-embed@384").count() == 5


@pytest.mark.django_db
def test_failed_message_is_found_by_keyword_then_by_semantic_after_the_retry(
    settings, llm_server, api, session, embed_now
):
    # given an embedding server that fails once
    _remote(settings, llm_server)
    llm_server.script(Status(503, "overloaded"))
    with embed_now():
        msg = add(session, "the sandbox deploy key rotates weekly")[0]
    archive_all(session)

    stored = Message.objects.get(pk=msg.pk)
    assert stored.embedding is None
    assert stored.embedding_attempts == 1
    assert "503" in stored.embedding_error
    status = api.get("/search/status").json()
    assert (status["model"], status["corpora"]["messages"]) == (
        "remote-embed@384",
        {
            "vectors": True, "embedded": 0, "stale": 0, "pending": 0, "failed": 1,
            # a remote embedder keeps no token states
            "token_states": {"space": "", "stored": 0, "pending": 0, "error": ""},
        },
    )  # fmt: skip

    # keyword search still finds it; semantic does not (no vector yet)
    r = api.post("/search", {"query": "sandbox key", "mode": "keyword"})
    assert [h["id"] for h in r.json()["hits"]] == [str(msg.id)]
    assert api.post("/search", {"query": "sandbox key"}).json()["hits"] == []

    # when the sweep retries and the server answers
    assert embed_pending_task() == 1

    # then semantic search finds it
    stored = Message.objects.get(pk=msg.pk)
    assert (stored.embedding_error, stored.embedding_attempts) == ("", 1)
    r = api.post("/search", {"query": "sandbox key"})
    assert [h["id"] for h in r.json()["hits"]] == [str(msg.id)]
    # the failed batch, the semantic query above, the sweep's batch; this query's vector
    # came from the query cache (apps.providers.embeddings.embed_query)
    assert [r.body["input"] for r in llm_server.requests] == [
        ["the sandbox deploy key rotates weekly"], ["sandbox key"],
        ["the sandbox deploy key rotates weekly"],
    ]  # fmt: skip


@pytest.mark.django_db(transaction=True)
@pytest.mark.celery_worker
def test_worker_retries_with_backoff_until_the_server_recovers(
    settings, llm_server, celery_worker, api, session
):
    # given a server failing twice, and a 0.2 s first backoff
    _remote(settings, llm_server)
    settings.MEMORYHUB_EMBEDDING_RETRY_SECONDS = 0.2
    llm_server.script(Status(500), Status(502))

    r = api.post("/sessions/chat-1/messages", {"messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 201

    # then the real worker retries (0.2 s, then 0.4 s) and the third attempt succeeds
    deadline = time.monotonic() + 30  # a safety net against a hang, not a speed assertion
    while time.monotonic() < deadline:
        stored = Message.objects.get()
        if stored.embedding is not None:
            break
        time.sleep(0.05)
    assert stored.embedding_model == "remote-embed@384"
    assert (stored.embedding_error, stored.embedding_attempts) == ("", 2)
    assert [r.path for r in llm_server.requests] == ["/v1/embeddings"] * 3


@pytest.mark.django_db
def test_sweep_skips_messages_past_max_attempts(settings, session):
    settings.MEMORYHUB_EMBEDDING_MAX_ATTEMPTS = 3
    rows = add(session, "a", "b")
    Message.objects.filter(pk=rows[1].pk).update(embedding_attempts=3, embedding_error="x")

    assert embed_pending_task() == 1

    labels = Message.objects.order_by("created_at").values_list("embedding_model", flat=True)
    assert list(labels) == ["fake-hash@384", ""]


@pytest.mark.django_db
def test_reembed_command_replaces_vectors_of_another_model(settings, session, embed_now, capsys):
    with embed_now():
        add(session, "one", "two")
    settings.MEMORYHUB_PROVIDERS = {**settings.MEMORYHUB_PROVIDERS, "embedding": MINILM}

    call_command("reembed")

    assert set(Message.objects.values_list("embedding_model", flat=True)) == {
        "all-MiniLM-L6-v2@384"
    }
    assert "re-embedded 2 messages with all-MiniLM-L6-v2@384, 0 failed" in capsys.readouterr().out
    call_command("reembed")  # idempotent: nothing left
    assert "re-embedded 0 messages" in capsys.readouterr().out


@pytest.mark.django_db
def test_vectors_of_another_model_are_not_compared(settings, api, session, embed_now):
    with embed_now():
        add(session, "My cat is called Whiskerino")
    settings.MEMORYHUB_PROVIDERS = {**settings.MEMORYHUB_PROVIDERS, "embedding": MINILM}

    assert api.post("/search", {"query": "cat name"}).json()["hits"] == []
    assert api.get("/search/status").json()["stale"] == 1


@pytest.mark.django_db
@pytest.mark.slow
def test_semantic_search_with_the_real_model(settings, api, session, embed_now):
    settings.MEMORYHUB_PROVIDERS = {**settings.MEMORYHUB_PROVIDERS, "embedding": MINILM}
    with embed_now():
        rows = add(
            session,
            "The quarterly report is due on Friday",
            "I bought new running shoes yesterday",
            "My cat is called Whiskerino",
            "The weather in Lisbon was sunny",
        )

    r = api.post("/search", {"query": "What is my cat's name?", "k": 4})

    hits = r.json()["hits"]
    assert [h["id"] for h in hits] == [str(rows[i].id) for i in (2, 1, 3, 0)]
    # int8 MiniLM cosine (docs/providers.md: within 0.0008 of fp32)
    assert [h["score"] for h in hits] == pytest.approx([0.6562, 0.0387, 0.0343, -0.0135], abs=2e-3)
