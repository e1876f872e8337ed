"""What the context assembler works with: parts, candidate messages, the request."""

from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from apps.agents.config import AgentConfig
from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.conversations.models import Message, Session
from apps.facts.models import Fact
from apps.memory.context.titles import part_title
from apps.search.ranking import LegRank


@dataclass(frozen=True)
class ContextRequest:
    agent: Agent
    config: AgentConfig
    session: Session
    query: str | None
    max_tokens: int
    # Reads shared by providers within this one call (e.g. the agent's workspace entries).
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def audience(self) -> Audience:
        """Whose memory the session reads: the agent's and its user's (issue 26); the
        agent's own alone for a session without a user (issue 39)."""
        return Audience(self.session.user)


@dataclass
class Part:
    """One unit of the system part. kind: document | summary | recap | learnings | hints | fact."""

    kind: str
    name: str
    content: str
    tokens: int | None = None  # None: get_context counts `content`; else a stored count
    truncated: bool = False
    fact: Fact | None = None

    @property
    def title(self) -> str:
        """The plain heading a prompt puts the part under ("Agent memory" for MEMORY.md)."""
        return part_title(self.kind, self.name)

    @property
    def counted(self) -> int:
        """`tokens`, which get_context has counted before it fits the parts to the budget."""
        if self.tokens is None:
            raise ValueError(f"{self.name}: tokens not counted yet")
        return self.tokens


@dataclass
class Candidate:
    """A message found by one or more legs (recency, salience, relevance, memory)."""

    message: Message
    legs: list[str] = field(default_factory=list)
    similarity: float | None = None
    tokens: int = 0
    content: str = ""
    truncated: bool = False
    # Memory leg: a hit's rank and fused score in /search's hybrid ranking, and the search
    # legs that found it; None for a message its context window brought.
    rank: int | None = None
    score: float | None = None
    search_legs: dict[str, LegRank] | None = None


@dataclass
class MemoryHit:
    """A memory-leg hit with its span: itself and the /search context window around it in
    its session (search_context_before/after), session order, none another leg holds."""

    candidate: Candidate
    span: list[Candidate]
    window: int  # index into MemoryLeg.windows


@dataclass
class MemoryWindow:
    """The memory leg's messages of one merged /search context window: one run of one
    session, under a header line naming the session and its date (counted in the budget)."""

    session: Session
    date: date
    header: str
    header_tokens: int
    messages: list[Candidate]  # time order

    @property
    def rank(self) -> int:
        """Its best hit's rank."""
        return min(c.rank for c in self.messages if c.rank is not None)

    @property
    def tokens(self) -> int:
        return self.header_tokens + sum(c.tokens for c in self.messages)


@dataclass
class MemoryLeg:
    hits: list[MemoryHit] = field(default_factory=list)  # rank order
    windows: list[MemoryWindow] = field(default_factory=list)
    warning: str = ""


class SystemProvider(Protocol):
    """Contributes parts to the system prompt (documents, summary, learnings, facts...).

    Providers are listed in settings.MEMORYHUB_CONTEXT_PROVIDERS, in budget priority order;
    a later learnings provider (error memory with TTL) plugs in there.
    """

    def __call__(self, request: ContextRequest) -> list[Part]: ...
