"""Write an agent's workspace (entries as files, with the HISTORY files) to a .tar.gz."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.agents.models import Agent
from apps.memory.services import workspace_archive


class Command(BaseCommand):
    help = "Export an agent's workspace documents and entries as a deterministic .tar.gz."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("agent", help="the agent's slug")
        parser.add_argument("output", help="archive path, or - for standard output")

    def handle(self, *args: object, agent: str, output: str, **options: object) -> None:
        found = Agent.objects.filter(slug=agent).first()
        if found is None:
            raise CommandError(f"no agent '{agent}'")
        data = workspace_archive(agent=found)
        if output == "-":
            sys.stdout.buffer.write(data)
            return
        Path(output).write_bytes(data)
        self.stderr.write(f"wrote {len(data)} bytes to {output}")
