"""The request an endpoint is handed, as the endpoints read it."""

from typing import Protocol

from django.http import HttpRequest

from apps.agents.keyscope import KeyScope
from apps.agents.models import Agent


class AuthedRequest(Protocol):
    """What an endpoint reads from its request: the agent its API key authenticated, and
    the key's scope (enforced before the endpoint runs: apps/api/scopes.py). ninja hands an
    HttpRequest whose `auth` and `key_scope` ApiKeyAuth set; an MCP tool hands its
    ToolRequest."""

    @property
    def auth(self) -> Agent: ...

    @property
    def key_scope(self) -> KeyScope: ...


class AuthedHttpRequest(HttpRequest):
    """An HttpRequest that ApiKeyAuth authenticated, for the endpoints that read the HTTP
    request itself (its body as a stream, its headers): no MCP tool calls them."""

    auth: Agent
    key_scope: KeyScope
