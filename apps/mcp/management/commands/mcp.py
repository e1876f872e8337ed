"""`manage.py mcp --key mh_… | --agent SLUG`: the MCP server over stdin/stdout."""

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from apps.agents.keyscope import UNSCOPED
from apps.mcp.auth import agent_for_slug, key_for
from apps.mcp.transport import serve_stdio


class Command(BaseCommand):
    help = "Serve MCP over stdin/stdout as one agent (logs go to stderr); exits when stdin closes."
    # Stdout is the protocol's: nothing else may be written there, and a fast start matters.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--key", help="the agent's API key (mh_…)")
        who.add_argument("--agent", help="the agent's slug")
        parser.add_argument(
            "--all-tools",
            action="store_true",
            help="list every tool in full (default: the compact default set; docs/mcp.md)",
        )

    def handle(
        self,
        *args: str,
        key: str | None,
        agent: str | None,
        all_tools: bool = False,
        **options: object,
    ) -> None:
        key_scope = UNSCOPED  # --agent: the operator's, unscoped
        if key is not None:
            api_key = key_for(key)
            if api_key is None:
                raise CommandError("the API key is unknown, malformed or revoked")
            found, key_scope = api_key.agent, api_key.scope
        else:
            by_slug = agent_for_slug(agent or "")
            if by_slug is None:
                raise CommandError(f"no agent '{agent}'")
            found = by_slug
        connections.close_all()  # tool calls open their own, in worker threads
        self.stderr.write(
            f"memoryhub MCP server on stdio as agent '{found.slug}' ({key_scope.describe()})"
        )
        serve_stdio(found, key_scope=key_scope, every_tool=all_tools)
