import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from apps.agents import services
from apps.agents.models import Agent


class Command(BaseCommand):
    help = "First run only: create an admin user and a demo agent, and print their secrets once."

    def handle(self, *args: object, **options: object) -> None:
        User = get_user_model()
        url = settings.MEMORYHUB_PUBLIC_URL
        lines = [
            f"memoryhub is at {url}  (review {url}/review/, API docs {url}/api/v1/docs, "
            f"admin {url}/admin/)",
            f"Log in at {url}/accounts/login/",
        ]
        if not User.objects.filter(is_superuser=True).exists():
            password = secrets.token_urlsafe(12)
            User.objects.create_superuser("admin", "admin@localhost", password)
            lines.append(f"Admin login: admin / {password}  (shown once)")
        if not Agent.objects.exists():
            agent = services.agent_create(slug="demo", team_name="default", name="Demo agent")
            issued = services.api_key_issue(agent=agent, name="bootstrap")
            lines.append(f"Demo agent 'demo' API key: {issued.raw}  (shown once)")
            lines.append(f"  export MEMORYHUB_KEY={issued.raw}")
        for line in lines:
            self.stdout.write(line)
