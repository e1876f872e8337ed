"""What the context assembler works with: parts, candidate messages, the request."""

from dataclasses import dataclass, field
from typing import Protocol

from apps.agents.config import AgentConfig
from apps.agents.models import Agent
from apps.conversations.models import Message, Session
from apps.facts.models import Fact


@dataclass(frozen=True)
class ContextRequest:
    agent: Agent
    config: AgentConfig
    session: Session
    query: str | None
    max_tokens: int
    # Reads shared by providers within this one call (e.g. the agent's workspace entries).
    memo: dict = field(default_factory=dict, compare=False, repr=False)


@dataclass
class Part:
    """One unit of the system part. kind: document | summary | learnings | fact."""

    kind: str
    name: str
    content: str
    tokens: int | None = None  # None: get_context counts `content`; else a stored count
    truncated: bool = False
    fact: Fact | None = None


@dataclass
class Candidate:
    """A message found by one or more legs (recency, salience, relevance)."""

    message: Message
    legs: list[str] = field(default_factory=list)
    similarity: float | None = None
    tokens: int = 0
    content: str = ""
    truncated: bool = False


class SystemProvider(Protocol):
    """Contributes parts to the system prompt (documents, summary, learnings, facts...).

    Providers are listed in settings.MEMORYHUB_CONTEXT_PROVIDERS, in budget priority order;
    a later learnings provider (error memory with TTL) plugs in there.
    """

    def __call__(self, request: ContextRequest) -> list[Part]: ...
