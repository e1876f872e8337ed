"""A worker killed (kill -9) in the middle of an embedding task: late acknowledgement leaves
the task with the broker, which delivers it again after its visibility timeout to the next
worker. Afterwards every message is embedded, none twice, and no message is duplicated.

The broker is a redis-server of the test's own (visibility timeout 2 s); the web server and
both workers are real processes of this tree on the test database; the loopback embeddings
server holds the first request (a Gate) so the kill lands mid-task, not by timing.
"""

import time
from collections import Counter
from pathlib import Path

import pytest

from apps.conversations.models import Message
from tests.support import celery_process
from tests.support.celery_process import WorkerProcess
from tests.support.llm_server import Gate, Reply
from tests.support.services import RedisServer, WebServer, service_env, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.celery_worker]

CONTENTS = [f"message {i} for the embedder" for i in range(5)]
VISIBILITY = 2  # seconds before Redis may deliver an unacknowledged task again


def texts(requests) -> Counter:
    """How often each message's text was sent to be embedded (not /healthz's probe)."""
    return Counter(
        text
        for r in requests
        if r.path == "/v1/embeddings"
        for text in (r.body or {})["input"]
        if text in CONTENTS
    )


def past_visibility(broker: RedisServer) -> bool:
    """Every unacknowledged task was taken more than VISIBILITY seconds ago (kombu keeps
    when in the `unacked_index` sorted set)."""
    taken = broker.command("ZRANGE", "unacked_index", "0", "-1", "WITHSCORES").split()
    return bool(taken) and all(time.time() - float(t) > VISIBILITY + 0.2 for t in taken[1::2])


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_embedding_leaves_every_message_embedded_once(
    tmp_path: Path, broker: RedisServer, llm_server, api, session
):
    gate = Gate(timeout=300)  # opened by the test's teardown, long after the kill

    def hold_the_first_batch(body):
        # Only the task's request: /healthz's provider probe embeds too.
        return gate if CONTENTS[0] in body["input"] and not gate.entered.is_set() else None

    llm_server.script(Reply(hold_the_first_batch, repeat=True))
    env = service_env(
        tmp_path / "data",
        DATABASE_URL=celery_process.test_database_url(),
        CELERY_BROKER_URL=broker.url(),
        CELERY_BROKER_VISIBILITY_TIMEOUT=str(VISIBILITY),
        MEMORYHUB_EMBEDDING_URL=llm_server.url,
        MEMORYHUB_EMBEDDING_MODEL="test-embedding",
    )
    log = tmp_path / "workers.log"
    web = WebServer(env, tmp_path / "web.log")
    first = second = None
    try:
        # given an append whose embedding task is in flight in a real worker
        first = WorkerProcess(env=env, log=log, whole_env=True)
        reply = web.api(api.key).request(
            "POST",
            f"/sessions/{session.pk}/messages",
            {"messages": [{"role": "user", "content": c} for c in CONTENTS]},
        )
        assert reply.status == 201, reply.raw
        assert gate.entered.wait(60), log.read_text()

        # when the worker is killed before the embedder answers
        first.kill()
        assert Message.objects.filter(embedding__isnull=True).count() == len(CONTENTS)
        assert broker.command("HLEN", "unacked") == "1"  # the task, taken and not acknowledged

        # then the broker gives the task to the next worker, which embeds every message:
        # a worker restores unacknowledged tasks past the visibility timeout when it starts
        # (and then only every 100 s), so it starts once the task is past it
        wait_for(lambda: past_visibility(broker), 30, "the visibility timeout")
        second = WorkerProcess(env=env, log=log, whole_env=True)
        wait_for(
            lambda: not Message.objects.filter(embedding__isnull=True).exists(),
            60,
            "the redelivered task's embeddings",
        )
        wait_for(lambda: broker.command("HLEN", "unacked") == "0", 30, "the acknowledgement")
        assert broker.command("LLEN", "celery") == "0"  # nothing left to deliver again
        answered = [a.request for a in llm_server.answered]  # before the gate opens
    except BaseException:
        print(web.log_tail(), log.read_text(errors="replace")[-6000:] if log.exists() else "")
        raise
    finally:
        for worker in (first, second):
            if worker is not None:
                worker.stop()
        web.stop()
        gate.open()

    assert sorted(Message.objects.values_list("content", flat=True)) == CONTENTS
    assert set(
        Message.objects.values_list("embedding_model", "embedding_error", "embedding_attempts")
    ) == {("test-embedding@384", "", 0)}
    # The killed worker's request reached the embedder and was never answered; the retry's
    # was, once: each text sent twice, embedded once.
    assert texts(llm_server.requests) == dict.fromkeys(CONTENTS, 2)
    assert texts(answered) == dict.fromkeys(CONTENTS, 1)
