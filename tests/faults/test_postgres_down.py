"""PostgreSQL stopped while agents append: the API answers 503 JSON with Retry-After while it
is down, recovers by itself when it is back (CONN_HEALTH_CHECKS), and every append it
acknowledged is stored exactly once.

Everything is private to the test: a PostgreSQL cluster of its own (initdb on a free port,
`pg_ctl stop -m fast` is the fault), a redis-server as broker, and the real web server
(gunicorn) of this tree. The shared cluster on 5432 is never touched.
"""

import json
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench._http import Api, Reply, fetch
from tests.support.services import (
    PostgresCluster,
    RedisServer,
    WebServer,
    create_agent,
    migrate,
    service_env,
    wait_for,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

WRITERS = 4


@dataclass
class Sent:
    """One append: its unique content (also its idempotency key), the phases in which it
    started and ended, and the answer."""

    content: str
    began: str
    ended: str
    status: int
    content_type: str
    retry_after: str | None
    body: object


@dataclass
class Phase:
    """Where the cluster is: "up", "stopping", "down", "starting", "back"."""

    name: str = "up"


@dataclass
class Stack:
    pg: PostgresCluster
    web: WebServer
    api: Api
    session: str


UNAVAILABLE = {"detail": "the database is unavailable; retry later"}


def _json_or_text(raw: bytes) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return raw[:200]


def _append(api: Api, session: str, content: str) -> Reply | None:
    """One message whose idempotency key is its content; None when no answer came."""
    body = {"messages": [{"role": "user", "content": content, "idempotency_key": content}]}
    try:
        return api.request("POST", f"/sessions/{session}/messages", body)
    except OSError:
        return None


def _writer(stack: Stack, n: int, phase: Phase, stop: threading.Event, out: list) -> None:
    i = 0
    while not stop.is_set():
        content = f"writer {n} message {i}"
        began = phase.name
        reply = _append(stack.api, stack.session, content)
        out.append(
            Sent(
                content=content,
                began=began,
                ended=phase.name,
                status=reply.status if reply else 0,
                content_type=reply.headers.get("content-type", "") if reply else "",
                retry_after=reply.headers.get("retry-after") if reply else None,
                body=_json_or_text(reply.raw) if reply else None,
            )
        )
        i += 1


@pytest.fixture
def stack(tmp_path: Path, llm_server) -> Iterator[Stack]:
    """A private cluster, migrated, a private broker and the web server on them."""
    pg = PostgresCluster()
    broker = RedisServer(tmp_path)
    web = None
    try:
        pg.init()
        broker.start()
        env = service_env(
            tmp_path / "data",
            DATABASE_URL=pg.url(),
            CELERY_BROKER_URL=broker.url(),
            MEMORYHUB_EMBEDDING_URL=llm_server.url,
            MEMORYHUB_EMBEDDING_MODEL="test-embedding",
        )
        migrate(env)
        key = create_agent(env, "fault-pg")
        web = WebServer(env, tmp_path / "web.log", threads=WRITERS + 4)
        api = web.api(key)
        status, body, _ = api.call("POST", "/sessions", {"key": "pg-down"})
        assert status == 201, body
        yield Stack(pg=pg, web=web, api=api, session=body["id"])
    except BaseException:
        if web is not None:
            print(web.log_tail())
        raise
    finally:
        if web is not None:
            web.stop()
        broker.stop()
        pg.destroy()


def _stored(pg: PostgresCluster) -> Counter:
    rows = pg.psql("SELECT content, count(*) FROM conversations_message GROUP BY content")
    return Counter({content: int(n) for content, n in rows})


def test_postgres_stopped_during_appends_answers_503_then_recovers_losing_nothing(
    stack: Stack,
):
    phase, stop = Phase(), threading.Event()
    results: list[list[Sent]] = [[] for _ in range(WRITERS)]
    threads = [
        threading.Thread(target=_writer, args=(stack, n, phase, stop, results[n]))
        for n in range(WRITERS)
    ]

    def count(r: list[Sent], status: int, began: str, ended: str | None = None) -> int:
        return sum(s.status == status and s.began == began and s.ended in (ended, began) for s in r)

    try:
        # given agents appending steadily
        for t in threads:
            t.start()
        wait_for(lambda: all(count(r, 201, "up") >= 5 for r in results), 30, "acks")

        # when the cluster stops mid-way
        phase.name = "stopping"
        stack.pg.stop("fast")
        phase.name = "down"

        # then requests made while it is down answer 503 JSON with Retry-After; /healthz 503
        wait_for(lambda: all(count(r, 503, "down", "down") >= 3 for r in results), 30, "503s")
        listing = stack.api.request("GET", "/sessions")
        assert (listing.status, listing.json()) == (503, UNAVAILABLE)
        assert listing.headers["retry-after"] == "5"
        healthz = fetch("GET", stack.web.base + "/healthz")
        assert healthz.status == 503
        assert (healthz.json()["status"], healthz.json()["database"]["ok"]) == ("down", False)

        # and when it is back, requests succeed again without restarting the server
        phase.name = "starting"
        stack.pg.start()
        phase.name = "back"
        wait_for(lambda: all(count(r, 201, "back") >= 5 for r in results), 30, "recovery")
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert stack.web.process.poll() is None  # the server never died

    sent = [s for r in results for s in r]
    down = [s for s in sent if s.began == s.ended == "down"]
    assert {(s.status, s.content_type, s.retry_after) for s in down} == {
        (503, "application/json", "5")
    }
    assert [s.body for s in down] == [UNAVAILABLE] * len(down)
    # A request straddling the stop or the restart either succeeded or got the 503.
    assert {s.status for s in sent} == {201, 503}
    assert {s.status for s in sent if s.began == s.ended == "back"} == {201}

    # an agent retrying its refused appends with the same idempotency key stores each once:
    # appended now, or found stored by a request that committed but could not answer
    for s in sent:
        if s.status != 201:
            again = _append(stack.api, stack.session, s.content)
            assert again is not None, s
            assert again.status == 201, s
            assert again.json()["created"] + again.json()["deduplicated"] == 1

    acknowledged = [s.content for s in sent if s.status == 201]
    assert len(acknowledged) == len(set(acknowledged))
    stored = _stored(stack.pg)
    assert set(acknowledged) <= set(stored)
    assert stored == Counter({s.content: 1 for s in sent})  # each exactly once, nothing else
