from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.agents import services
from apps.agents.models import Agent
from apps.core.errors import InvalidInput


class Command(BaseCommand):
    help = (
        "Issue a new API key for an existing agent, optionally bound to one end user "
        "(--user) and/or read-only (--read-only); the key is the last line of output."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", default="cli")
        parser.add_argument("--user", help="bind the key to this end user: it acts as them only")
        parser.add_argument("--read-only", action="store_true", help="the key may not write")

    def handle(
        self,
        *args: object,
        slug: str,
        name: str,
        user: str | None,
        read_only: bool,
        **options: object,
    ) -> None:
        agent = Agent.objects.filter(slug=slug).first()
        if agent is None:
            raise CommandError(f"no agent '{slug}'")
        try:
            issued = services.api_key_issue(agent=agent, name=name, user=user, read_only=read_only)
        except InvalidInput as exc:
            raise CommandError(f"--{exc.loc[-1] if exc.loc else 'user'}: {exc.message}") from exc
        scope = issued.api_key.scope.describe()
        self.stdout.write(f"New API key for '{agent.slug}' ({scope}; shown once):")
        self.stdout.write(issued.raw)
