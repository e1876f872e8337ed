"""Concurrent appends lose nothing and duplicate nothing (PostgreSQL, real connections); the
embedding sweeps they run (eagerly, in the request threads here) leave no message behind."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from apps.conversations.models import Message
from tests.support.client import ApiClient

THREADS = 8
# 1,600 appends from 8 threads interleave plenty; 4,000 took 4-5 minutes of the CI's hour.
PER_THREAD = 200


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_8_threads_x_200_appends_to_one_session(api, session):
    def worker(t: int) -> list[str]:
        client = ApiClient(key=api.key, client=Client())
        ids = []
        try:
            for i in range(PER_THREAD):
                r = client.post(
                    f"/sessions/{session.id}/messages",
                    {"messages": [{"role": "user", "content": f"t{t} m{i}"}]},
                )
                assert r.status_code == 201, r.content
                ids.append(r.json()["messages"][0]["id"])
        finally:
            connection.close()
        return ids

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))

    returned = [i for ids in results for i in ids]
    contents = list(Message.objects.filter(session=session).values_list("content", flat=True))
    assert len(returned) == len(set(returned)) == THREADS * PER_THREAD
    assert len(contents) == THREADS * PER_THREAD
    assert sorted(contents) == sorted(
        f"t{t} m{i}" for t in range(THREADS) for i in range(PER_THREAD)
    )
    # one sweep of the agent at a time; those that found one running left it a note, and
    # every message was read by some sweep
    assert Message.objects.filter(session=session, embedding__isnull=True).count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_with_the_same_idempotency_keys_store_each_once(api, session):
    keys = [f"k{i}" for i in range(50)]

    def worker(t: int) -> list[str]:
        client = ApiClient(key=api.key, client=Client())
        try:
            r = client.post(
                f"/sessions/{session.id}/messages",
                {"messages": [{"role": "user", "content": k, "idempotency_key": k} for k in keys]},
            )
            assert r.status_code == 201, r.content
            return [m["id"] for m in r.json()["messages"]]
        finally:
            connection.close()

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))

    assert Message.objects.filter(session=session).count() == len(keys)
    assert all(ids == results[0] for ids in results)
