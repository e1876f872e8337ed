"""The agent, its key and the live server's URL, for tests that call memoryhub over real
HTTP (tests/clients, tests/adapters, tests/mcp import these fixtures into their conftest).
The agent is written in a transactional test database, so the server thread sees it."""

import pytest

from tests.factories import AgentFactory, issue_key


@pytest.fixture
def agent(transactional_db):
    return AgentFactory(slug="alice-bot")


@pytest.fixture
def key(agent) -> str:
    return issue_key(agent)


@pytest.fixture
def live_url(live_server) -> str:
    return live_server.url
