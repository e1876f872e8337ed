"""`manage.py mcp` over stdio: `--key` or `--agent`, resolved once at start; a bad one exits
with status 1 and a message on stderr before any MCP."""

import subprocess
import sys

import pytest
from django.conf import settings
from mcp.shared.exceptions import MCPError

from apps.agents.models import ApiKey
from apps.facts.models import Fact
from tests.mcp.conftest import McpClient, leaves, server_env, stdio_params

pytestmark = pytest.mark.django_db(transaction=True)


def _manage_mcp(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "mcp", *args],
        cwd=settings.BASE_DIR,
        env=server_env(),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--key", "mh_nope_nope"), "CommandError: the API key is unknown, malformed or revoked"),
        (("--agent", "nobody-bot"), "CommandError: no agent 'nobody-bot'"),
    ],
    ids=["bad-key", "unknown-agent"],
)
def test_a_bad_key_or_agent_exits_1_with_a_message(agent, args, message):
    done = _manage_mcp(*args)

    assert done.returncode == 1
    assert done.stdout == ""  # nothing an MCP client would take for a message
    assert done.stderr == message + "\n"


def test_a_revoked_key_exits_1(agent, key):
    ApiKey.objects.filter(agent=agent).update(revoked_at="2026-01-01T00:00:00Z")

    done = _manage_mcp("--key", key)

    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        "CommandError: the API key is unknown, malformed or revoked\n",
    )


def test_the_sdk_client_with_a_bad_key_cannot_connect(agent):
    with pytest.raises((MCPError, BaseExceptionGroup)) as raised:
        McpClient(stdio_params("--key", "mh_nope_nope"))

    assert [(type(e), str(e)) for e in leaves(raised.value)] == [(MCPError, "Connection closed")]


def test_agent_slug_acts_for_that_agent(agent, other_agent):
    client = McpClient(stdio_params("--agent", "alice-bot"))
    try:
        saved = client.result("memory_save", {"content": "Prefers green tea"})
    finally:
        client.close()

    fact = Fact.objects.get(pk=saved["fact"]["id"])
    assert (fact.agent_id, fact.value) == (agent.pk, "Prefers green tea")
    assert Fact.objects.filter(agent=other_agent).count() == 0
