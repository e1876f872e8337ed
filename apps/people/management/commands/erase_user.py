"""`manage.py erase_user --agent SLUG|ID USER [--vacuum | --check]`: erase one end user of
an agent (issue 26), then make the bytes unreadable (issue 39); or check for an erasure."""

import getpass

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.agents.models import Agent
from apps.core.errors import ApplicationError
from apps.people.selectors import user_erasures
from apps.people.services import Actor, erased_user, erasure_vacuum, user_erase


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
        "learning, HISTORY entry and run of theirs, in one transaction; prints the counts. "
        "--vacuum then makes the deleted bytes unreadable on disk; --check erases nothing "
        "and says whether the audit log records an erasure of the user."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", required=True, help="the agent's slug or id")
        parser.add_argument("user", help='the end user, as sessions name it ("telegram:42")')
        parser.add_argument(
            "--vacuum",
            action="store_true",
            help="after the erasure commits: SQLite VACUUM and WAL checkpoint, PostgreSQL "
            "VACUUM of the touched tables (docs/memory.md)",
        )
        parser.add_argument(
            "--check",
            action="store_true",
            help="erase nothing: print the erasures of this user the audit log records",
        )

    def handle(
        self, *args: object, agent: str, user: str, vacuum: bool, check: bool, **options: object
    ) -> None:
        found = agent_named(agent)
        try:
            name = erased_user(user)
            if check:
                self._check(found, name)
                return
            erased = user_erase(agent=found, user=name, actor=Actor("cli", operator()))
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Erased user '{name}' of agent '{found.slug}':")
        for kind, count in erased.counts().items():
            self.stdout.write(f"  {kind}: {count}")
        if vacuum:
            done = erasure_vacuum()
            self.stdout.write("Vacuumed." if done else "Not vacuumed (a reader held the WAL).")

    def _check(self, agent: Agent, user: str) -> None:
        """The erasures of `user` recorded for `agent` (their events hold the user's HMAC)."""
        events = user_erasures(agent=agent, user=user)
        if not events:
            self.stdout.write(f"No erasure of user '{user}' of agent '{agent.slug}' is recorded.")
            return
        self.stdout.write(f"User '{user}' of agent '{agent.slug}' was erased:")
        for event in events:
            self.stdout.write(f"  {event.created_at.isoformat()} by {event.username}")
