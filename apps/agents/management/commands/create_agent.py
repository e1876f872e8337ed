from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.agents import services
from apps.core.errors import ApplicationError


class Command(BaseCommand):
    help = "Create an agent and print a new API key as the last line of output."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--team", default="default")
        parser.add_argument("--name", default="")

    def handle(self, *args: object, slug: str, team: str, name: str, **options: object) -> None:
        try:
            agent = services.agent_create(slug=slug, team_name=team, name=name)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        issued = services.api_key_issue(agent=agent, name="cli")
        self.stdout.write(f"Created agent '{agent.slug}' in team '{agent.team.name}'.")
        self.stdout.write("API key (shown once):")
        self.stdout.write(issued.raw)
