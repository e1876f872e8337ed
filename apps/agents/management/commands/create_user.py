import os

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.agents import services
from apps.agents.models import MemberRole
from apps.core.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Create a user who reviews a team's agents (a viewer, or an editor with --editor). "
        "The password comes from MEMORYHUB_PASSWORD, else one is generated and printed once, "
        "as the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--team", required=True, help="team name (created if needed)")
        parser.add_argument("--editor", action="store_true", help="may curate, not only read")
        parser.add_argument("--staff", action="store_true", help="may log in to the admin")

    def handle(
        self, *args: object, username: str, team: str, editor: bool, staff: bool, **options: object
    ) -> None:
        role = MemberRole.EDITOR if editor else MemberRole.VIEWER
        try:
            created = services.user_create(
                username=username,
                team_name=team,
                role=role,
                staff=staff,
                password=os.environ.get("MEMORYHUB_PASSWORD", ""),
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Created user '{username}', {role} of team '{team}'.")
        if created.generated:
            self.stdout.write("Password (shown once):")
            self.stdout.write(created.password)
