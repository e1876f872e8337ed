"""The request an endpoint is handed, as the endpoints read it."""

from typing import Protocol

from django.http import HttpRequest

from apps.agents.models import Agent


class AuthedRequest(Protocol):
    """What an endpoint reads from its request: the agent its API key authenticated. ninja
    hands an HttpRequest whose `auth` ApiKeyAuth set; an MCP tool hands its ToolRequest."""

    @property
    def auth(self) -> Agent: ...


class AuthedHttpRequest(HttpRequest):
    """An HttpRequest that ApiKeyAuth authenticated, for the endpoints that read the HTTP
    request itself (its body as a stream, its headers): no MCP tool calls them."""

    auth: Agent
