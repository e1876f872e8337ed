"""`manage.py mcp --key mh_… | --agent SLUG`: the MCP server over stdin/stdout."""

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from apps.mcp.auth import agent_for_key, agent_for_slug
from apps.mcp.transport import serve_stdio


class Command(BaseCommand):
    help = "Serve MCP over stdin/stdout as one agent (logs go to stderr); exits when stdin closes."
    # Stdout is the protocol's: nothing else may be written there, and a fast start matters.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--key", help="the agent's API key (mh_…)")
        who.add_argument("--agent", help="the agent's slug")

    def handle(self, *args, key: str | None, agent: str | None, **options):
        if key is not None:
            found = agent_for_key(key)
            if found is None:
                raise CommandError("the API key is unknown, malformed or revoked")
        else:
            found = agent_for_slug(agent or "")
            if found is None:
                raise CommandError(f"no agent '{agent}'")
        connections.close_all()  # tool calls open their own, in worker threads
        self.stderr.write(f"memoryhub MCP server on stdio as agent '{found.slug}'")
        serve_stdio(found)
