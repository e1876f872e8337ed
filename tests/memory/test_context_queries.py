"""get_context's per-call work is fixed: a pinned number of queries that does not grow with
the number of documents, facts or messages found, and documents are not re-tokenised."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.agents.users import AGENT_ONLY
from apps.conversations.models import Message, Summary
from apps.conversations.selectors import message_search
from apps.conversations.services import NewMessage, messages_append
from apps.entries.models import Entry
from apps.entries.services import entry_add
from apps.facts.models import Fact
from apps.facts.services import fact_save
from apps.learnings.services import learning_create
from apps.memory.context import get_context
from apps.providers.embeddings import embed_query
from apps.search.legs import keyword_search, vector_search
from tests.factories import SessionFactory

pytestmark = pytest.mark.django_db

# documents, active learnings, summary, salient facts with their categories, the relevant
# facts' rows, salience leg, the relevance leg's message rows (error hints cost nothing while
# no tool failed); plus the search layer's own statements for the vector query of messages
# and the vector and keyword queries of facts (one each on SQLite; on PostgreSQL a savepoint
# and SET LOCALs around vector queries), measured by `search_statements` so work on
# apps/search does not break this pin. And the recap's cutoff: the newest consolidated message.
# The memory leg's cost is measured the same way (`memory_statements`).
OWN_QUERIES = 8
# a cold working memory adds the session's compaction cutoff and its hot messages
WORKING_MEMORY_MISS = 2
# once messages have left the 16-message window: the summary cursor, read to carry those it
# does not cover yet (window_includes_unsummarised)
SUMMARY_CURSOR = 1


@pytest.fixture
def memory(agent, session, django_capture_on_commit_callbacks):
    """Every provider and every leg has something to find; returns a function adding more."""
    for name in ["SOUL.md", "AGENTS.md", "USER.md", "MEMORY.md"]:
        entry_add(agent=agent, name=name, content=f"contents of {name}")
    learning_create(agent=agent, kind="error", content="grep fails on binary files")
    Summary.objects.create(session=session, content="Earlier we planned a trip.")
    earlier = SessionFactory(agent=agent, key="chat-0")  # the memory leg's
    batch = [NewMessage(role="user", content=f"earlier message {i}") for i in range(3)]
    with django_capture_on_commit_callbacks(execute=True):
        messages_append(session=earlier, messages=batch)

    def add(n: int, tag: str) -> None:
        for i in range(n):
            fact_save(agent=agent, content=f"{tag} fact {i}", category=f"{tag}-{i}",
                      importance=0.9)  # fmt: skip
        batch = [NewMessage(role="user", content=f"{tag} message {i}") for i in range(n * 5)]
        with django_capture_on_commit_callbacks(execute=True):  # embed them
            rows = messages_append(session=session, messages=batch).messages
        Message.objects.filter(pk__in=[r.pk for r in rows[:n]]).update(importance=0.9)

    add(3, "first")
    return add


def search_statements(agent, session) -> int:
    """What the search layer's queries cost: messages by vector, facts by vector and BM25."""
    vector = embed_query("first message 1")
    usable = Fact.objects.usable().filter(agent=agent)
    with CaptureQueriesContext(connection) as captured:
        vector_search("messages", agent_id=agent.pk, vector=vector, limit=10,
                      queryset=Message.objects.filter(session=session), exact=True)  # fmt: skip
        vector_search("facts", agent_id=agent.pk, vector=vector, limit=5, queryset=usable)
        keyword_search("facts", agent_id=agent.pk, query="first message 1", limit=5,
                       queryset=usable)  # fmt: skip
    return len(captured.captured_queries)


def memory_statements(agent) -> int:
    """What the memory leg costs: /search's hybrid ranking with its context windows (the
    search layer's statements), plus one for the windows' sessions."""
    with CaptureQueriesContext(connection) as captured:
        message_search(
            agent=agent, query="first message 1", mode="hybrid", k=20, audience=AGENT_ONLY
        )
    return len(captured.captured_queries) + 1


def queries(agent, session) -> tuple[int, set[str], list[str]]:
    with CaptureQueriesContext(connection) as captured:
        ctx = get_context(agent=agent, session=session, query="first message 1", max_tokens=None)
    legs = {leg for c in ctx.messages for leg in c.legs}
    legs |= {leg for w in ctx.memory for c in w.messages for leg in c.legs}
    return len(captured.captured_queries), legs, [p.kind for p in ctx.parts]


def test_query_count_is_pinned_and_independent_of_what_is_found(agent, session, memory):
    # PostgreSQL's BM25 stems a word once per process (its stem cache): stem the query's
    # words first, so no count below depends on which test ran before this one.
    search_statements(agent, session)
    warm = OWN_QUERIES + search_statements(agent, session) + memory_statements(agent)

    count, legs, kinds = queries(agent, session)  # working memory cold
    assert count == warm + WORKING_MEMORY_MISS
    assert legs == {"recency", "salience", "relevance", "memory"}
    assert kinds == ["document"] * 4 + ["summary", "learnings"] + ["fact"] * 3

    assert queries(agent, session)[0] == warm

    memory(6, "more")  # three times the facts, messages and salient messages
    assert queries(agent, session)[0] == warm + WORKING_MEMORY_MISS + SUMMARY_CURSOR
    count, legs, kinds = queries(agent, session)
    assert count == warm + SUMMARY_CURSOR
    assert legs == {"recency", "salience", "relevance", "memory"}
    assert kinds == ["document"] * 4 + ["summary", "learnings"] + ["fact"] * 9


def test_documents_use_the_stored_token_count(agent, session, memory):
    Entry.objects.filter(agent=agent, name="SOUL.md").update(token_count=999)
    Entry.objects.filter(agent=agent, name="USER.md").update(token_count=None)  # never counted

    ctx = get_context(agent=agent, session=session, query=None, max_tokens=None)

    tokens = {p.name: p.tokens for p in ctx.parts if p.kind == "document"}
    assert tokens == {"SOUL.md": 999, "AGENTS.md": 5, "USER.md": 5, "MEMORY.md": 5}
