"""Load a workspace archive into an agent; existing names are overwritten only with --force."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.agents.models import Agent
from apps.core.errors import ApplicationError
from apps.memory.services import workspace_load


class Command(BaseCommand):
    help = "Import a workspace .tar.gz (as written by workspace_export) into an agent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("agent", help="the agent's slug")
        parser.add_argument("archive", help="path of the .tar.gz")
        parser.add_argument(
            "--force", action="store_true", help="overwrite entries whose names already exist"
        )

    def handle(
        self, *args: object, agent: str, archive: str, force: bool, **options: object
    ) -> None:
        found = Agent.objects.filter(slug=agent).first()
        if found is None:
            raise CommandError(f"no agent '{agent}'")
        path = Path(archive)
        try:
            # Streamed, so the import limits apply before a large archive is read whole.
            with path.open("rb") as data:
                loaded = workspace_load(
                    agent=found, data=data, force=force, declared_size=path.stat().st_size
                )
        except OSError as exc:
            raise CommandError(f"cannot read {archive}: {exc}") from exc
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        result = loaded.entries
        self.stdout.write(
            f"imported {len(result.names)} entries "
            f"({result.created} created, {result.overwritten} overwritten) "
            f"and {loaded.history_entries} history entries, {loaded.learnings} learnings"
        )
