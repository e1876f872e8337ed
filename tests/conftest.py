import pytest
from celery._state import _set_task_join_will_block
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from tests.factories import AgentFactory, SessionFactory, issue_key
from tests.support.client import ApiClient

pytest_plugins = [
    "tests.support.llm_server",
    "tests.support.celery_worker",
    "tests.support.llama_server",
]

VENDOR = "postgresql" if "postgresql" in settings.DATABASES["default"]["ENGINE"] else "sqlite"


def pytest_collection_modifyitems(config, items):
    """Backend-specific tests run in their backend's CI run; the two runs cover everything."""
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(pytest.mark.skipif(VENDOR != "postgresql", reason="PostgreSQL run"))
        if "sqlite" in item.keywords:
            item.add_marker(pytest.mark.skipif(VENDOR != "sqlite", reason="SQLite run"))


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _celery_join_flag():
    """Celery's eager apply_async saves and restores a process-wide "a join would block"
    flag around the task; request threads running eager tasks at once (test_concurrency)
    can restore it in the wrong order and leave it set, and every later `.get()` of an
    eager result then raises "Never call result.get() within a task"."""
    yield
    _set_task_join_will_block(False)


@pytest.fixture
def agent(db):
    return AgentFactory(slug="alice-bot")


@pytest.fixture
def other_agent(db):
    return AgentFactory(slug="mallory-bot")


@pytest.fixture
def api(agent):
    """Client authenticated as `agent`."""
    return ApiClient(key=issue_key(agent), client=Client())


@pytest.fixture
def other_api(other_agent):
    """Client authenticated as another agent, for isolation tests."""
    return ApiClient(key=issue_key(other_agent), client=Client())


@pytest.fixture
def session(agent):
    return SessionFactory(agent=agent, key="chat-1")
