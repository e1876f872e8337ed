"""Batch embedding (issue 29): one pending sweep per agent however many appends, one embedder
call and one UPDATE per batch, and a row edited while its batch is in the embedder never
keeps the old text's vector."""

import threading
from contextlib import contextmanager
from datetime import timedelta

import numpy as np
import pytest
from celery.signals import after_task_publish
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.conversations.models import Message, MessageTokens
from apps.facts.models import Category, Fact
from apps.facts.services import fact_save, fact_update
from apps.learnings.models import ErrorRecord
from apps.learnings.services.error_records import error_record_create
from apps.providers.embeddings.fake import HashEmbedder
from apps.search.sweeps import marker_key
from apps.search.tasks import embed_agent_task
from memoryhub.celery import app
from tests.factories import SessionFactory
from tests.memory.helpers import BROKEN, HASH, use_embedder
from tests.search.conftest import T0, add
from tests.support.llm_server import Delay, Embeddings, Gate, Status


def _remote(settings, llm_server):
    use_embedder(
        settings,
        {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {"URL": llm_server.url, "MODEL": "remote-embed", "DIMENSIONS": 384},
        },
    )


@contextmanager
def broker_only():
    """Tasks go to the real broker (nobody consumes them); yields the (name, args) of every
    task published, and empties the queue afterwards."""
    sent: list[tuple[str, tuple]] = []

    def record(sender=None, headers=None, body=None, **_):
        sent.append((headers["task"], tuple(body[0])))

    after_task_publish.connect(record, weak=False)
    app.conf.task_always_eager = False
    try:
        yield sent
    finally:
        app.conf.task_always_eager = True
        after_task_publish.disconnect(record)
        app.control.purge()


def _hashed(text: str) -> np.ndarray:
    return np.asarray(HashEmbedder().embed([text])[0], dtype=np.float32)


def _sweep_in_background(agent_id: int) -> tuple[threading.Thread, dict]:
    """Start what the worker runs for this agent in a thread with its own connection; the
    thread and where it leaves the count embedded."""
    result: dict = {}

    def sweep() -> None:
        try:
            result["embedded"] = embed_agent_task.apply(args=(agent_id,)).get()
        finally:
            connection.close()

    thread = threading.Thread(target=sweep)
    thread.start()
    return thread, result


@pytest.mark.django_db
def test_many_appends_queue_one_sweep_per_agent(session, other_agent, embed_now):
    theirs = SessionFactory(agent=other_agent, key="other")

    with broker_only() as sent, embed_now():
        for i in range(20):
            add(session, f"mine {i}")
        add(theirs, "theirs")
        fact_save(agent=session.agent, content="Lives in Berlin", category="profile")

    assert sorted(sent) == sorted(
        [("search.embed_agent", (session.agent_id,)), ("search.embed_agent", (other_agent.pk,))]
    )
    assert Message.objects.filter(embedding__isnull=True).count() == 21


@pytest.mark.django_db
def test_the_sweep_starts_by_dropping_the_marker_so_the_next_write_queues_again(session, embed_now):
    from django.core.cache import cache

    with broker_only() as sent:
        with embed_now():
            add(session, "one")
        assert cache.get(marker_key(session.agent_id)) == 1

        assert embed_agent_task.apply(args=(session.agent_id,)).get() == 1  # as a worker
        assert cache.get(marker_key(session.agent_id)) is None
        with embed_now():
            add(session, "two")
            add(session, "three")

    assert sent == [("search.embed_agent", (session.agent_id,))] * 2


@pytest.mark.django_db
def test_a_batch_is_one_embedder_call_and_one_update(settings, llm_server, session, embed_now):
    _remote(settings, llm_server)
    settings.MEMORYHUB_EMBEDDING_BATCH_SIZE = 3
    with broker_only():
        with embed_now():
            for i in range(7):
                add(session, f"turn {i}", start=T0 + timedelta(minutes=i))

        with CaptureQueriesContext(connection) as queries:
            assert embed_agent_task.apply(args=(session.agent_id,)).get() == 7

    assert [r.body["input"] for r in llm_server.requests] == [
        ["turn 0", "turn 1", "turn 2"], ["turn 3", "turn 4", "turn 5"], ["turn 6"],
    ]  # fmt: skip
    updates = [q["sql"] for q in queries if q["sql"].startswith('UPDATE "conversations_message"')]
    assert len(updates) == 3
    assert Message.objects.filter(embedding_model="remote-embed@384").count() == 7


@pytest.mark.django_db
def test_a_sweep_starts_no_batch_past_its_time_and_the_next_sweep_goes_on(
    settings, llm_server, session, embed_now
):
    # given a slow embedder: the first batch of 3 takes longer than the sweep's time
    _remote(settings, llm_server)
    settings.MEMORYHUB_EMBEDDING_BATCH_SIZE = 3
    settings.MEMORYHUB_EMBEDDING_SWEEP_SECONDS = 0.2
    vectors = [[1.0] + [0.0] * 383] * 3
    llm_server.script(Delay(0.5, then=Embeddings(vectors)))
    with broker_only():
        with embed_now():
            for i in range(7):
                add(session, f"turn {i}", start=T0 + timedelta(minutes=i))

        # when the worker sweeps, then it stops after that batch (its task would queue the
        # next sweep; eager runs leave that to the beat), and the next sweep takes the rest
        assert embed_agent_task.apply(args=(session.agent_id,)).get() == 3
        assert Message.objects.filter(embedding__isnull=True).count() == 4
        assert embed_agent_task.apply(args=(session.agent_id,)).get() == 4

    assert [r.body["input"] for r in llm_server.requests] == [
        ["turn 0", "turn 1", "turn 2"], ["turn 3", "turn 4", "turn 5"], ["turn 6"],
    ]  # fmt: skip


@pytest.mark.django_db
def test_a_batch_stops_at_the_character_budget(settings, llm_server, session, embed_now):
    _remote(settings, llm_server)
    settings.MEMORYHUB_EMBEDDING_BATCH_CHARS = 10
    with embed_now():
        add(session, "aaaa", "bbbb", "cccc", "dddddddddddddddd", "e")

    # 4 + 4 fit, a third would pass 10; a text over the budget goes alone
    assert [r.body["input"] for r in llm_server.requests] == [
        ["aaaa", "bbbb"], ["cccc"], ["dddddddddddddddd"], ["e"],
    ]  # fmt: skip


@pytest.mark.django_db
def test_one_sweep_embeds_every_corpus_of_its_agent_with_token_states(
    settings, session, other_agent
):
    use_embedder(settings, BROKEN)
    mine = add(session, "hello", "world")
    fact_save(agent=session.agent, content="Lives in Berlin", category="profile")
    error_record_create(agent=session.agent, tool_name="git", error="merge conflict")
    theirs = add(SessionFactory(agent=other_agent, key="o"), "not mine")
    use_embedder(settings, HASH)

    # 2 messages, the fact, its category, the error record
    assert embed_agent_task.apply(args=(session.agent_id,)).get() == 5

    label = "fake-hash@384"
    assert set(Message.objects.filter(pk__in=[m.pk for m in mine]).values_list(
        "embedding_model", flat=True)) == {label}  # fmt: skip
    assert Message.objects.get(pk=theirs[0].pk).embedding is None
    assert Fact.objects.get().embedding_model == label
    assert Category.objects.get().embedding_model == label
    record = ErrorRecord.objects.get()
    assert record.embedding.tolist() == pytest.approx(_hashed("git: merge conflict").tolist())
    assert sorted(MessageTokens.objects.values_list("message_id", "count")) == sorted(
        [(mine[0].pk, 1), (mine[1].pk, 1)]
    )


@pytest.mark.django_db
def test_a_failed_batch_records_the_attempt_on_its_rows_and_stops(
    settings, llm_server, session, embed_now
):
    _remote(settings, llm_server)
    settings.MEMORYHUB_EMBEDDING_BATCH_SIZE = 2
    llm_server.script(Embeddings([_hashed("one").tolist(), _hashed("two").tolist()]), Status(503))

    with embed_now():
        rows = add(session, "one", "two", "three", "four", "five")

    state = {
        m.content: (m.embedding is not None, m.embedding_attempts, "503" in m.embedding_error)
        for m in Message.objects.filter(pk__in=[r.pk for r in rows])
    }
    assert state == {
        "one": (True, 0, False),
        "two": (True, 0, False),
        "three": (False, 1, True),
        "four": (False, 1, True),
        "five": (False, 0, False),  # after the failed batch: left for the retry
    }
    assert len(llm_server.requests) == 2

    # the retry takes the failed rows too, fewest attempts first
    assert embed_agent_task.apply(args=(session.agent_id,)).get() == 3
    assert [r.body["input"] for r in llm_server.requests[2:]] == [["five", "three"], ["four"]]
    assert Message.objects.filter(embedding__isnull=True).count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_row_edited_during_its_batch_is_embedded_again_with_its_new_text(
    settings, llm_server, agent
):
    # given a committed message (its sweep queued), and a server holding the next request
    session = SessionFactory(agent=agent, key="race")
    _remote(settings, llm_server)
    stale = _hashed("Lives in Berlin")
    gate = Gate(then=Embeddings([stale.tolist()]))
    llm_server.script(gate)
    with broker_only() as sent:
        [msg] = add(session, "Lives in Berlin")
        thread, result = _sweep_in_background(agent.pk)
        try:
            assert gate.entered.wait(10)
            # when the text changes, and another message arrives, while the old text is
            # in the embedder (no message edit service exists: the row is written directly)
            Message.objects.filter(pk=msg.pk).update(content="Lives in Hamburg")
            [late] = add(session, "Moved last May", start=T0 + timedelta(minutes=1))
        finally:
            gate.open()
            thread.join(30)

    # then the old text's vector was refused, and the sweep read the row again: the new
    # text and the late message went in one more call
    assert [r.body["input"] for r in llm_server.requests] == [
        ["Lives in Berlin"], ["Lives in Hamburg", "Moved last May"],
    ]  # fmt: skip
    assert result["embedded"] == 2
    msg.refresh_from_db()
    assert msg.embedding.tolist() == pytest.approx(_hashed("Lives in Hamburg").tolist())
    assert not np.allclose(msg.embedding, stale)
    late.refresh_from_db()
    assert late.embedding.tolist() == pytest.approx(_hashed("Moved last May").tolist())
    # the append during the sweep found no marker (the sweep dropped it) and queued the next
    assert sent == [("search.embed_agent", (agent.pk,))] * 2


@pytest.mark.django_db(transaction=True)
def test_a_fact_edited_through_its_service_during_its_batch_keeps_no_stale_vector(
    settings, llm_server, agent
):
    # given a fact whose new value waits for the pipeline (the admin's edit: embed_now=False)
    use_embedder(settings, HASH)
    fact = fact_save(agent=agent, content="Lives in Berlin", category="profile").fact
    _remote(settings, llm_server)
    stale = _hashed("Lives in Lisbon")
    gate = Gate(then=Embeddings([stale.tolist()]))
    llm_server.script(gate)
    with broker_only() as sent:
        fact = fact_update(agent=agent, fact=fact, changed_by="admin", value="Lives in Lisbon",
                           embed_now=False)  # fmt: skip
        fact.refresh_from_db()
        assert fact.embedding is None
        thread, result = _sweep_in_background(agent.pk)
        try:
            assert gate.entered.wait(10)
            # when a person edits the value again while "Lives in Lisbon" is in the embedder
            fact_update(agent=agent, fact=Fact.objects.get(pk=fact.pk), changed_by="admin",
                        value="Lives in Hamburg", embed_now=False)  # fmt: skip
        finally:
            gate.open()
            thread.join(30)

    # then the Lisbon vector was refused and the sweep embedded the value the fact holds now
    assert [r.body["input"] for r in llm_server.requests] == [
        ["Lives in Lisbon"], ["Lives in Hamburg"],
    ]  # fmt: skip
    assert result["embedded"] == 1
    fact.refresh_from_db()
    assert fact.value == "Lives in Hamburg"
    assert fact.embedding.tolist() == pytest.approx(_hashed("Lives in Hamburg").tolist())
    assert not np.allclose(fact.embedding, stale)
    assert list(fact.versions.order_by("number").values_list("old_value", "new_value")) == [
        ("", "Lives in Berlin"),
        ("Lives in Berlin", "Lives in Lisbon"),
        ("Lives in Lisbon", "Lives in Hamburg"),
    ]  # fmt: skip
    # each edit queued a sweep: the one during the sweep found no marker (the sweep dropped it)
    assert sent == [("search.embed_agent", (agent.pk,))] * 2


@pytest.mark.django_db(transaction=True)
def test_a_sweep_started_while_another_runs_calls_no_model_and_leaves_it_a_note(
    settings, llm_server, agent
):
    # given a sweep holding "first" in the embedder (another worker process, in effect)
    session = SessionFactory(agent=agent, key="two-sweeps")
    _remote(settings, llm_server)
    gate = Gate(then=Embeddings([_hashed("first").tolist()]))
    llm_server.script(gate, Embeddings([_hashed("second").tolist()]))
    with broker_only():
        [first] = add(session, "first")
        thread, result = _sweep_in_background(agent.pk)
        try:
            assert gate.entered.wait(10)
            # when another message commits and the sweep it queued runs meanwhile
            [second] = add(session, "second", start=T0 + timedelta(minutes=1))
            assert embed_agent_task.apply(args=(agent.pk,)).get() == 0
        finally:
            gate.open()
            thread.join(30)

    # then the second sweep called no model ("first" was in flight) and the first one read
    # again on its note: each text went to the embedder once
    assert [r.body["input"] for r in llm_server.requests] == [["first"], ["second"]]
    assert result["embedded"] == 2
    for row, text in ((first, "first"), (second, "second")):
        row.refresh_from_db()
        assert row.embedding.tolist() == pytest.approx(_hashed(text).tolist())


@pytest.mark.django_db
def test_with_the_cache_unreachable_a_sweep_still_runs(settings, session):
    # given rows without a vector, and a cache nobody answers at (Redis on a closed port)
    rows = add(session, "one", "two")
    settings.CACHES = {
        "default": {
            "BACKEND": "apps.core.cache.TolerantRedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }

    # when the worker sweeps the agent, then it embeds them: the lock is the database's, and
    # only the notes between sweeps are lost
    assert embed_agent_task.apply(args=(session.agent_id,)).get() == 2
    assert [m.embedding_model for m in Message.objects.filter(pk__in=[r.pk for r in rows])] == [
        "fake-hash@384"
    ] * 2
