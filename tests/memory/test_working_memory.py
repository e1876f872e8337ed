"""Working memory (seed 002): last 50 messages per session in a cache shared by processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connection

from apps.conversations import working_memory
from apps.conversations.selectors import session_recent_messages
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def in_other_process(code: str) -> str:
    """Run `code` in a fresh Python process with the same settings; return its stdout."""
    script = "import django; django.setup()\n" + code
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryhub.settings.test"}
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        # The child connects to the test database (on_commit checks the connection).
        env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.mark.sqlite
def test_embedded_default_cache_is_the_shared_file_cache():
    assert settings.CACHES["default"]["BACKEND"] == (
        "django.core.cache.backends.filebased.FileBasedCache"
    )


@pytest.mark.postgres
def test_production_cache_is_redis():
    # Django's Redis cache, with a Redis outage degraded to misses (apps/core/cache.py).
    assert settings.CACHES["default"]["BACKEND"] == "apps.core.cache.TolerantRedisCache"
    assert isinstance(caches["default"], RedisCache)


def test_another_process_reads_the_cached_window_and_its_invalidation_is_seen(session):
    m1 = MessageFactory(session=session, content="one")
    assert [m.content for m in session_recent_messages(session=session, limit=50)] == ["one"]

    # another process sees what this one cached, without touching the database
    seen = in_other_process(
        "import json, uuid\n"
        "from apps.conversations import working_memory\n"
        f"rows = working_memory.read_through(uuid.UUID('{session.id}'), lambda: 'MISS')\n"
        "print(json.dumps(rows if rows == 'MISS' else [str(m.id) for m in rows]))"
    )
    assert json.loads(seen) == [str(m1.id)]

    # a row written behind the cache's back stays invisible until someone invalidates...
    m2 = MessageFactory(session=session, content="two")
    assert [m.content for m in session_recent_messages(session=session, limit=50)] == ["one"]
    # ...and an invalidation from another process is seen here at once
    in_other_process(
        "import uuid\n"
        "from apps.conversations import working_memory\n"
        f"working_memory.invalidate(uuid.UUID('{session.id}'))"
    )
    assert [m.id for m in session_recent_messages(session=session, limit=50)] == [m1.id, m2.id]


def append(api, session, content):
    return api.post(f"/sessions/{session.id}/messages", {"messages": [{"role": "user",
                    "content": content}]})  # fmt: skip


def window(api, session):
    return [m["content"] for m in api.get(f"/sessions/{session.id}/window").json()["messages"]]


def test_append_invalidates(api, session, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        append(api, session, "first")
    assert window(api, session) == ["first"]

    with django_capture_on_commit_callbacks(execute=True):
        append(api, session, "second")

    assert window(api, session) == ["first", "second"]


def test_reset_invalidates(api, session, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        append(api, session, "first")
    assert window(api, session) == ["first"]

    with django_capture_on_commit_callbacks(execute=True):
        api.post(f"/sessions/{session.id}/reset")

    assert window(api, session) == []


def test_remove_invalidates(api, agent, session, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        append(api, session, "first")
    assert window(api, session) == ["first"]
    assert working_memory.read_through(session.id, lambda: "reloaded") != "reloaded"

    with django_capture_on_commit_callbacks(execute=True):
        api.delete(f"/sessions/{session.id}")

    # the cached window of the removed session is gone: the next read goes to the loader
    assert working_memory.read_through(session.id, lambda: "reloaded") == "reloaded"


def test_the_cache_holds_the_last_50_messages(session):
    for n in range(60):
        MessageFactory(session=session, content=f"m{n}")

    recent = session_recent_messages(session=session, limit=50)

    assert [m.content for m in recent] == [f"m{n}" for n in range(10, 60)]
