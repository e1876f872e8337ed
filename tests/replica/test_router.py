"""The router against a real streaming replica (.ci/start-replica.sh): which reads go to it,
which never do, and what happens when it is not there."""

from contextlib import contextmanager

import pytest
from django.db import DEFAULT_DB_ALIAS, connections, router, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.agents.users import AGENT_ONLY
from apps.conversations.models import Session
from apps.conversations.selectors import message_search
from apps.core.replicas import (
    PIN_COOKIE,
    forget_replica_answers,
    read_alias,
    read_connection,
    replica_reads,
)
from apps.facts.models import Fact
from apps.facts.services import fact_save
from tests.factories import SessionFactory, issue_key
from tests.replica.conftest import REPLICA, caught_up, with_replica
from tests.support.client import ApiClient, ok

pytestmark = [*with_replica, pytest.mark.usefixtures("replica_reads_on")]


@pytest.fixture
def agent_api(agent):
    return agent, ApiClient(key=issue_key(agent), client=Client())


def _append(api: ApiClient, session: str, *contents: str) -> None:
    messages = [{"role": "user", "content": c} for c in contents]
    ok(api.post(f"/sessions/{session}/messages", {"messages": messages}), 201)


@contextmanager
def _counted():
    """Queries on the primary and on the replica inside, as two lists of SQL."""
    with (
        CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as primary,
        CaptureQueriesContext(connections[REPLICA]) as replica,
    ):
        yield primary, replica


def _search(api: ApiClient, query: str, mode: str = "hybrid") -> list[str]:
    hits = ok(api.post("/search", {"query": query, "mode": mode, "k": 5}))["hits"]
    return [h["content"] for h in hits]


def test_an_append_then_a_window_read_never_misses_the_message(agent_api):
    agent, api = agent_api
    session = SessionFactory(agent=agent, key="chat-1")
    _append(api, session.key, "warm-up")
    caught_up()
    window_sql, search_sql = 0, 0
    for i in range(100):
        _append(api, session.key, f"message number {i}")
        with _counted() as (_primary, replica):
            window = ok(api.get(f"/sessions/{session.key}/window"))
        window_sql += len(replica)
        assert window["messages"][-1]["content"] == f"message number {i}"
        if i % 10 == 0:  # replica reads are live all along: search takes them
            with _counted() as (_primary, replica):
                _search(api, "warm-up", mode="keyword")
            search_sql += len(replica)
    assert window_sql == 0
    assert search_sql > 0


def test_context_right_after_an_append_holds_it_while_its_search_legs_read_the_replica(
    agent_api,
):
    agent, api = agent_api
    session = SessionFactory(agent=agent, key="chat-1")
    _append(api, session.key, "the cat sat on the mat")
    caught_up()
    for i in range(20):
        _append(api, session.key, f"where is the cat now, take {i}")
        with _counted() as (primary, replica):
            context = ok(api.post("/context", {"session_id": session.key, "query": "cat"}))
        assert context["messages"][-1]["content"] == f"where is the cat now, take {i}"
        assert len(replica) > 0  # the salience, relevance and memory legs and the fact legs
        assert len(primary) > 0  # the window, the session and the agent


def test_recall_reads_its_tiers_from_the_replica(agent_api):
    _agent, api = agent_api
    ok(api.post("/memory/save", {"content": "The user's cat is called Tom"}))
    caught_up()
    with _counted() as (primary, replica):
        items = ok(api.post("/memory/recall", {"query": "cat"}))["items"]

    assert [i["fact"]["value"] for i in items] == ["The user's cat is called Tom"]
    assert any("facts_fact" in q["sql"] for q in replica.captured_queries)
    # The reinforcement is a write, and the hits are read back after it: on the primary.
    assert any(q["sql"].startswith("UPDATE") for q in primary.captured_queries)
    assert not any(q["sql"].startswith("UPDATE") for q in replica.captured_queries)


def test_search_load_moves_to_the_replica(agent_api, settings):
    agent, api = agent_api
    session = SessionFactory(agent=agent, key="chat-1")
    _append(api, session.key, "the cat sat on the mat", "dogs chase cats", "a bird sang")
    caught_up()
    # BM25 stems a word once per process (its stem cache): a first search stems these, so
    # the two counted ones below make the same queries.
    _search(api, "cat mat")
    found = {}
    counts = {}
    for reads in (False, True):
        settings.MEMORYHUB_REPLICA_READS = reads
        forget_replica_answers()
        with _counted() as (primary, replica):
            found[reads] = _search(api, "cat mat")
        counts[reads] = (len(primary), len(replica))

    (off_primary, off_replica), (on_primary, on_replica) = counts[False], counts[True]
    assert found[True] == found[False]
    assert found[True][0] == "the cat sat on the mat"
    assert off_replica == 0
    # The replica answered a cheap probe first, then every query the search made on the
    # primary with replica reads off; the primary kept only the request's own (the API key).
    assert on_replica == 1 + (off_primary - on_primary)
    assert on_primary < off_primary
    assert all("conversations_message" not in q["sql"] for q in primary.captured_queries)


def test_a_dead_replica_falls_back_to_the_primary(agent_api):
    agent, api = agent_api
    session = SessionFactory(agent=agent, key="chat-1")
    _append(api, session.key, "the cat sat on the mat")
    caught_up()
    with _replica_down():
        assert _search(api, "cat") == ["the cat sat on the mat"]
        health = Client().get("/healthz")
        with replica_reads():
            assert read_alias() == DEFAULT_DB_ALIAS

    body = health.json()
    assert (health.status_code, body["status"], body["database"]["ok"]) == (200, "degraded", True)
    assert body["replicas"]["ok"] is False
    assert body["replicas"][REPLICA]["reachable"] is False
    assert body["replicas"][REPLICA]["lag_seconds"] is None
    assert "OperationalError" in body["replicas"][REPLICA]["detail"]


def test_a_replica_that_dies_mid_search_is_read_again_on_the_primary(agent_api):
    agent, api = agent_api
    session = SessionFactory(agent=agent, key="chat-1")
    _append(api, session.key, "the cat sat on the mat", "a bird sang")
    caught_up()
    with replica_reads():
        assert read_alias() == REPLICA  # chosen, and believed for a few seconds
        with _replica_down():
            result = message_search(
                agent=agent, query="cat", mode="keyword", k=5, audience=AGENT_ONLY
            )

    assert [h.message.content for h in result.hits] == ["the cat sat on the mat"]


def test_writes_go_to_the_primary_even_inside_replica_reads(agent_api):
    agent, _api = agent_api
    caught_up()
    with replica_reads():
        loaded = type(agent).objects.get(pk=agent.pk)
        assert loaded._state.db == REPLICA
        assert router.db_for_write(Session, instance=loaded) == DEFAULT_DB_ALIAS
        session = Session.objects.create(agent=loaded, key="made-inside")
        with transaction.atomic():
            # Inside a transaction on the primary a read stays there: it sees its own row.
            assert read_alias() == DEFAULT_DB_ALIAS
            assert read_connection() is connections[DEFAULT_DB_ALIAS]
            assert Session.objects.filter(key="made-inside").count() == 1

    assert session._state.db == DEFAULT_DB_ALIAS
    assert Session.objects.using(DEFAULT_DB_ALIAS).filter(key="made-inside").count() == 1
    # Outside the context, a relation of an instance read from the replica is read from
    # the primary (Django would otherwise follow the instance to the replica).
    assert router.db_for_read(Session, instance=loaded) == DEFAULT_DB_ALIAS
    assert loaded.sessions.filter(key="made-inside").count() == 1


def test_a_browser_reads_from_the_primary_for_a_few_seconds_after_its_post(
    agent_api, editor, editor_client
):
    agent, _api = agent_api
    fact = fact_save(agent=agent, content="The user's cat is called Whiskerino").fact
    caught_up()
    facts_url = reverse("review:facts", args=[agent.slug])
    with _counted() as (_primary, replica):
        assert editor_client.get(facts_url).status_code == 200
    assert len(replica) > 0  # a list page reads from the replica

    edit = reverse("review:fact_edit", args=[agent.slug, fact.pk])
    data = {"value": "The user's cat is Tom", "category": "pets", "key": "cat", "importance": "0.5"}
    response = editor_client.post(edit, data)
    assert response.status_code == 302
    pin = response.cookies[PIN_COOKIE]
    assert (pin.value, pin["max-age"], pin["httponly"], pin["samesite"]) == ("1", 10, True, "Lax")
    with _counted() as (_primary, replica):
        page = editor_client.get(facts_url)
    assert len(replica) == 0
    assert "The user&#x27;s cat is Tom" in page.content.decode()

    editor_client.cookies.pop(PIN_COOKIE)  # ten seconds later, the browser has dropped it
    caught_up()
    with _counted() as (_primary, replica):
        assert editor_client.get(facts_url).status_code == 200
    assert len(replica) > 0
    assert Fact.objects.get(pk=fact.pk).value == "The user's cat is Tom"


def test_api_posts_get_no_pin(agent_api):
    agent, api = agent_api
    session = SessionFactory(agent=agent, key="chat-1")
    response = api.post(f"/sessions/{session.key}/messages", {"messages": []})

    assert PIN_COOKIE not in response.cookies


def test_healthz_reports_the_replica_and_its_lag(db):
    caught_up()
    body = ok(Client().get("/healthz"))

    replica = body["replicas"][REPLICA]
    assert (body["status"], body["replicas"]["ok"], body["replicas"]["reads"]) == ("ok", True, "on")
    assert (replica["reachable"], replica["detail"]) == (True, "streaming replica")
    assert isinstance(replica["lag_seconds"], float)
    assert 0.0 <= replica["lag_seconds"] < 5.0


@contextmanager
def _replica_down():
    """The replica's address moved to a closed port (its server keeps running for the
    others): what the router sees when a replica dies."""
    replica = connections[REPLICA]
    port = replica.settings_dict["PORT"]
    replica.close()
    replica.settings_dict["PORT"] = 1
    try:
        yield
    finally:
        replica.close()
        replica.settings_dict["PORT"] = port
        forget_replica_answers()
