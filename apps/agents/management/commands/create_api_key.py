from django.core.management.base import BaseCommand, CommandError

from apps.agents import services
from apps.agents.models import Agent


class Command(BaseCommand):
    help = "Issue a new API key for an existing agent; the key is the last line of output."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", default="cli")

    def handle(self, *args, slug: str, name: str, **options) -> None:
        agent = Agent.objects.filter(slug=slug).first()
        if agent is None:
            raise CommandError(f"no agent '{slug}'")
        issued = services.api_key_issue(agent=agent, name=name)
        self.stdout.write(f"New API key for '{agent.slug}' (shown once):")
        self.stdout.write(issued.raw)
