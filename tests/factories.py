"""Model factories. Keys are issued through the service so they are real, hashed keys."""

import factory
from django.utils import timezone

from apps.agents.models import Agent, Team
from apps.agents.services import api_key_issue
from apps.conversations.models import Message, Session


class TeamFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Team
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"team-{n}")


class AgentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Agent

    team = factory.SubFactory(TeamFactory)
    slug = factory.Sequence(lambda n: f"agent-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())


class SessionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Session

    agent = factory.SubFactory(AgentFactory)
    key = factory.Sequence(lambda n: f"session-{n}")
    title = ""


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    session = factory.SubFactory(SessionFactory)
    agent = factory.SelfAttribute("session.agent")
    role = "user"
    content = factory.Sequence(lambda n: f"message number {n}")
    created_at = factory.LazyFunction(timezone.now)
    byte_size = factory.LazyAttribute(lambda o: len(o.content.encode()))


def issue_key(agent: Agent) -> str:
    return api_key_issue(agent=agent, name="test").raw
