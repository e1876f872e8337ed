"""`manage.py erase_user --agent SLUG|ID USER`: erase one end user of an agent (issue 26)."""

import getpass

from django.core.management.base import BaseCommand, CommandError

from apps.agents.models import Agent
from apps.core.errors import ApplicationError
from apps.lifecycle.services.erasure import Actor, erased_user, user_erase


def agent_named(ref: str) -> Agent:
    """The agent with this slug, or this id; CommandError when there is none."""
    found = Agent.objects.filter(slug=ref).first()
    if found is None and ref.isdigit():
        found = Agent.objects.filter(pk=int(ref)).first()
    if found is None:
        raise CommandError(f"no agent '{ref}'")
    return found


def operator() -> str:
    """Who ran the command, for the audit event: "cli:<login>" when the system knows."""
    try:
        return f"cli:{getpass.getuser()}"[:150]
    except (OSError, KeyError):  # no login name (a container without a passwd entry)
        return "cli"


class Command(BaseCommand):
    help = (
        "Erase one end user of an agent: every session, message, vector, fact, entry, "
        "learning, HISTORY entry and run of theirs, in one transaction; prints the counts."
    )

    def add_arguments(self, parser):
        parser.add_argument("--agent", required=True, help="the agent's slug or id")
        parser.add_argument("user", help='the end user, as sessions name it ("telegram:42")')

    def handle(self, *args, agent: str, user: str, **options):
        found = agent_named(agent)
        try:
            name = erased_user(user)
            erased = user_erase(agent=found, user=name, actor=Actor("cli", operator()))
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Erased user '{name}' of agent '{found.slug}':")
        for kind, count in erased.counts().items():
            self.stdout.write(f"  {kind}: {count}")
