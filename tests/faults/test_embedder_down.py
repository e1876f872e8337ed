"""The embedder unreachable: appends are stored (their embedding waits for the pipeline),
search falls back to keyword and says so (`"degraded": ["semantic"]`), and /healthz says
why while still answering 200 (only a database that is down makes it 503).

The web server is a real process of this tree on the test database, its embedder an
OpenAI-compatible URL on which nothing listens, its broker a redis-server of the test's own.
"""

from pathlib import Path

import pytest

from apps.conversations.models import Message
from bench._http import fetch
from tests.support import celery_process
from tests.support.llm_server import unused_port_url
from tests.support.services import RedisServer, WebServer, append, service_env

pytestmark = [pytest.mark.slow]

CONTENTS = [
    "the deploy runs on tuesday",
    "lunch with anna on friday",
    "a deploy freeze until monday",
]
DEPLOY = {CONTENTS[0], CONTENTS[2]}


@pytest.mark.django_db(transaction=True)
def test_embedder_down_appends_are_stored_search_degrades_and_healthz_says_why(
    tmp_path: Path, broker: RedisServer, api, session
):
    embedder = unused_port_url()
    env = service_env(
        tmp_path / "data",
        DATABASE_URL=celery_process.test_database_url(),
        CELERY_BROKER_URL=broker.url(),
        MEMORYHUB_EMBEDDING_URL=embedder,
        MEMORYHUB_EMBEDDING_MODEL="test-embedding",
        MEMORYHUB_EMBEDDING_TIMEOUT="2",
    )
    web = WebServer(env, tmp_path / "web.log")
    try:
        agent_api = web.api(api.key)

        # appends answer 201 and are stored, waiting for their embeddings
        append(agent_api, str(session.pk), CONTENTS)
        assert sorted(Message.objects.values_list("content", "embedding")) == [
            (c, None) for c in sorted(CONTENTS)
        ]

        # semantic and hybrid search answer from keyword, and say so; keyword is not degraded
        found = {}
        for mode in ("semantic", "hybrid", "keyword"):
            reply = agent_api.request("POST", "/search", {"query": "deploy", "mode": mode})
            assert reply.status == 200, (mode, reply.raw)
            found[mode] = reply.json()
        for mode in ("semantic", "hybrid"):
            body = found[mode]
            assert (body["mode"], body["degraded"]) == (mode, ["semantic"])
            assert {h["content"] for h in body["hits"] if "bm25" in h["legs"]} == DEPLOY
            assert {leg for h in body["hits"] for leg in h["legs"]} <= {"bm25", "neighbour"}
        # keyword mode never embeds: the hot window by substring, as always
        assert found["keyword"]["degraded"] == []
        assert {h["content"] for h in found["keyword"]["hits"]} == DEPLOY

        # /healthz: up (200), degraded, and the embedding provider says what is wrong
        health = fetch("GET", web.base + "/healthz")
        assert health.status == 200
        body = health.json()
        assert body["status"] == "degraded"
        assert body["database"]["ok"] is True
        assert body["providers"]["embedding"]["ok"] is False
        detail = body["providers"]["embedding"]["detail"]
        assert "cannot reach" in detail
        assert embedder.rstrip("/") + "/embeddings" in detail
    except BaseException:
        print(web.log_tail())
        raise
    finally:
        web.stop()
