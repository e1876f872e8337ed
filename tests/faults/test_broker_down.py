"""The broker (Redis) down while agents append: appends still succeed and are stored; when it
returns, the embedding sweep (search.embed_pending) catches up through a real worker, and
every message is embedded exactly once.

The broker is a redis-server of the test's own, which also holds the cache, as production's
one Redis usually does; the web server (gunicorn) and the workers are real processes of this
tree on the test database; embeddings come from the loopback server, which records every
text it is asked to embed.
"""

from collections import Counter
from pathlib import Path

import pytest
from kombu import Connection

from apps.conversations.models import Message
from bench._http import fetch
from memoryhub.celery import app
from tests.support import celery_process
from tests.support.celery_process import WorkerProcess
from tests.support.services import RedisServer, WebServer, append, service_env, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.celery_worker]


def embedded_texts(llm_server) -> Counter:
    """How many times each text was sent to the embeddings endpoint."""
    return Counter(
        text
        for r in llm_server.requests
        if r.path == "/v1/embeddings"
        for text in (r.body or {}).get("input", [])
    )


def sweep(broker: RedisServer) -> None:
    """What beat does every 5 minutes: send search.embed_pending, here to `broker`."""
    app.conf.task_always_eager = False  # the test settings' default; this one must travel
    try:
        with Connection(broker.url()) as conn:
            app.send_task("search.embed_pending", connection=conn)
    finally:
        app.conf.task_always_eager = True


def unembedded() -> int:
    return Message.objects.filter(embedding__isnull=True).count()


@pytest.mark.django_db(transaction=True)
def test_broker_down_appends_succeed_and_the_sweep_embeds_each_message_once(
    tmp_path: Path, broker: RedisServer, llm_server, api, session
):
    env = service_env(
        tmp_path / "data",
        DATABASE_URL=celery_process.test_database_url(),
        CELERY_BROKER_URL=broker.url(0),
        CACHE_URL=broker.url(1),
        MEMORYHUB_EMBEDDING_URL=llm_server.url,
        MEMORYHUB_EMBEDDING_MODEL="test-embedding",
    )
    web = WebServer(env, tmp_path / "web.log")
    log = tmp_path / "workers.log"
    worker = None
    try:
        agent_api = web.api(api.key)
        sid = str(session.pk)

        # given messages appended and embedded while the broker is up
        worker = WorkerProcess(env=env, log=log, whole_env=True)
        append(agent_api, sid, ["before one", "before two"])
        wait_for(lambda: unembedded() == 0, 30, "the first messages' embeddings")
        worker.stop()

        # when the broker goes down, appends still answer 201 and are stored, unembedded
        broker.stop()
        down = [f"while down {i}" for i in range(6)]
        for i in range(0, len(down), 2):
            append(agent_api, sid, down[i : i + 2])
        assert set(
            Message.objects.filter(embedding__isnull=True).values_list("content", flat=True)
        ) == set(down)
        health = fetch("GET", web.base + "/healthz")  # up, and says the broker is not
        assert (health.status, health.json()["status"]) == (200, "degraded")
        assert health.json()["broker"]["ok"] is False

        # then, the broker back, the beat sweep catches up on what no sweep was queued for
        broker.start()
        worker = WorkerProcess(env=env, log=log, whole_env=True)
        sweep(broker)
        wait_for(lambda: unembedded() == 0, 30, "the sweep's embeddings")
        # and appends queue their agent's sweep again
        append(agent_api, sid, ["after one"])
        wait_for(
            lambda: (
                not Message.objects.filter(content="after one", embedding__isnull=True).exists()
            ),
            30,
            "the append after the restart to be embedded",
        )
        wait_for(lambda: broker.command("LLEN", "celery") == "0", 10, "an empty queue")
    except BaseException:
        print(web.log_tail(), log.read_text(errors="replace")[-4000:] if log.exists() else "")
        raise
    finally:
        if worker is not None:
            worker.stop()
        web.stop()

    contents = ["before one", "before two", *down, "after one"]
    assert sorted(Message.objects.values_list("content", flat=True)) == sorted(contents)
    assert set(Message.objects.values_list("embedding_model", "embedding_error")) == {
        ("test-embedding@384", "")
    }
    texts = embedded_texts(llm_server)
    assert {c: texts[c] for c in contents} == dict.fromkeys(contents, 1)
