"""Rows of an agent's users and of the agent itself (issue 26), for the review pages' user
filters and users pages. Each is written through its domain service and then given its
owner, or through its model with an explicit `user`: the API threads `user` through on main,
these tests do not depend on it."""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.conversations.models import Message, Session
from apps.entries.models import Entry
from apps.entries.services import entry_add
from apps.facts.models import Fact
from apps.facts.services import fact_save
from apps.learnings.models import Learning
from apps.learnings.services import learning_create
from apps.lifecycle.models import HistoryEntry, Run
from apps.lifecycle.services.run_log import run_record
from tests.factories import MessageFactory, SessionFactory

ALICE = "telegram:42"
BOB = "bob@example.com"
T0 = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)


def owned_by(row, user: str):
    """`row` given to `user`, in the database and in memory."""
    type(row).objects.filter(pk=row.pk).update(user=user)
    row.user = user
    return row


@dataclass
class Owned:
    """What one owner (a user, or the agent: "") holds."""

    user: str
    session: Session
    messages: list[Message]
    facts: list[Fact]
    documents: list[Entry]  # MEMORY.md, USER.md
    note: Entry
    learning: Learning
    history: HistoryEntry
    run: Run
    ids: dict[str, list[int]] = field(default_factory=dict)


def seed_owner(agent: Agent, user: str, tag: str, *, minutes: int = 0) -> Owned:
    """A session with two messages (both say "parcel"), two facts (category `tag`), a
    MEMORY.md and a USER.md,
    a note, a correction, a HISTORY entry (March 2026) and a run, all of `user`."""
    at = T0 + timedelta(minutes=minutes)
    session = SessionFactory(agent=agent, key=f"{tag}-chat", user=user, title=f"{tag} chat")
    messages = [
        MessageFactory(session=session, content=f"{tag} asks where the parcel is", created_at=at),
        MessageFactory(
            session=session,
            role="assistant",
            content=f"{tag}'s parcel is in the depot",
            created_at=at + timedelta(seconds=1),
        ),
    ]
    # A category per owner: the dedup on write cannot take one owner's save for another's.
    facts = [
        owned_by(fact_save(agent=agent, content=text, category=tag, key=key).fact, user)
        for key, text in [
            (f"{tag}-food", f"{tag} eats fish on fridays"),
            (f"{tag}-city", f"{tag} lives near the harbour"),
        ]
    ]
    documents = [
        Entry.objects.create(agent=agent, user=user, name=name, content=f"{tag} {name}")
        for name in ("MEMORY.md", "USER.md")
    ]
    note = owned_by(entry_add(agent=agent, name=f"notes/{tag}.md", content=f"{tag} note"), user)
    learning = owned_by(
        learning_create(agent=agent, kind="correction", content=f"{tag} prefers short answers"),
        user,
    )
    history = HistoryEntry.objects.create(
        agent=agent,
        session=session,
        session_key=session.key,
        user=user,
        content=f"{tag} asked about a parcel.",
        created_at=at,
    )
    run = owned_by(
        run_record(agent=agent, session=session, kind="summary", trigger="auto", status="ok"),
        user,
    )
    return Owned(user, session, messages, facts, documents, note, learning, history, run)


def seed_three(agent: Agent) -> dict[str, Owned]:
    """The agent's own rows and those of two users, ALICE and BOB, by owner."""
    return {
        AGENT: seed_owner(agent, AGENT, "agent", minutes=0),
        ALICE: seed_owner(agent, ALICE, "alice", minutes=10),
        BOB: seed_owner(agent, BOB, "bob", minutes=20),
    }
