"""PostgreSQL's vector leg compares a small scope's vectors exactly, and walks the HNSW graph
only past NARROW rows. The graph is one per table, across agents, and keeps the entries of
dead rows (updated, deleted, rolled back) until VACUUM; with its plan, recall missed a user's
own fact after the suite's rolled-back tests had filled the graph with dead copies of it
(tests/users, on PostgreSQL, in the full run)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.agents.users import EVERYONE
from apps.facts.models import Fact
from apps.facts.services import fact_save, facts_recall
from apps.providers.embeddings import embed_query
from apps.search.backends.postgres import PostgresBackend, vectors
from apps.search.legs import vector_search

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

TEXTS = ["Alice adores marzipan", "Alice dislikes olives", "Support opens at nine"]


def _recall(agent) -> tuple[list[str], list[str]]:
    """The recalled values, and the statements of the vector leg (its HNSW settings)."""
    with CaptureQueriesContext(connection) as ctx:
        found = facts_recall(agent=agent, query="Alice adores marzipan", k=20, audience=EVERYONE)
    graph = [q["sql"] for q in ctx.captured_queries if "hnsw." in q["sql"]]
    return [h.fact.value for h in found.hits], graph


def test_a_small_scope_is_compared_exactly(agent):
    for text in TEXTS:
        fact_save(agent=agent, content=text)

    values, graph = _recall(agent)

    assert values[0] == "Alice adores marzipan"
    assert sorted(values) == sorted(TEXTS)
    assert graph == []


def test_past_narrow_the_graph_is_walked(agent, monkeypatch):
    monkeypatch.setattr(vectors, "NARROW", 2)
    for text in TEXTS:
        fact_save(agent=agent, content=text)

    values, graph = _recall(agent)

    # The graph is approximate (in the full suite its dead entries reorder and drop these
    # rows, which is why small scopes skip it): only that it was walked is asserted.
    assert set(values) <= set(TEXTS)
    assert graph == [
        f"SET LOCAL hnsw.ef_search = {max(PostgresBackend.ef_search, 20)}",
        "SET LOCAL hnsw.iterative_scan = relaxed_order",
    ]


def test_a_small_scope_is_read_and_compared_in_one_statement(agent):
    # given an agent without vectors, then the same agent with three
    vector = embed_query("Alice adores marzipan")

    def leg() -> tuple[list[str], list[str]]:
        with CaptureQueriesContext(connection) as ctx:
            hits = vector_search("facts", agent_id=agent.id, vector=vector, limit=20)
        values = list(
            Fact.objects.filter(pk__in=[h.object_id for h in hits]).values_list("value", flat=True)
        )
        return sorted(values), [q["sql"] for q in ctx.captured_queries]

    # when the vector leg runs: then an empty scope is one statement, no graph walked
    values, statements = leg()
    assert values == []
    assert len(statements) == 1
    assert "hnsw." not in statements[0]

    for text in TEXTS:
        fact_save(agent=agent, content=text)
    # and a small one is one statement too, every vector compared
    values, statements = leg()
    assert values == sorted(TEXTS)
    assert len(statements) == 1
    assert "hnsw." not in statements[0]
