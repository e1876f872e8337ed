# ruff: noqa: S608 - table and column names come from the corpus registry.
"""Checks that PostgreSQL's BM25 side tables describe exactly the rows of their corpora.

After a bulk copy the statistics were built by the triggers alone; these queries confirm it
from the rows themselves (docs/search.md has the tables).
"""

from dataclasses import dataclass

from django.db import connections
from django.db.backends.utils import CursorWrapper

from apps.search.backends.base import bm25_tables, postings_table
from apps.search.corpora import all_corpora


@dataclass(frozen=True)
class Bm25Check:
    """One corpus table: documents and agents indexed, and what disagrees (empty: none)."""

    corpus: str
    table: str
    documents: int
    agents: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _scalar(cursor: CursorWrapper, sql: str) -> int:
    cursor.execute(sql)
    return int(cursor.fetchone()[0] or 0)


def _check(cursor: CursorWrapper, name: str, table: str, agent: str) -> Bm25Check:
    doc, term, agg = bm25_tables(table)
    post = postings_table(table)
    mismatched = {
        "documents per agent differ from rows per agent": f"""
            SELECT count(*) FROM (SELECT {agent} AS agent_id, count(*) AS n FROM {table}
              GROUP BY 1) r FULL JOIN {agg} a ON a.agent_id = r.agent_id
            WHERE coalesce(r.n, 0) <> coalesce(a.n_docs, 0)""",
        "total length per agent differs from its documents'": f"""
            SELECT count(*) FROM (SELECT agent_id, sum(len) AS l FROM {doc} GROUP BY 1) d
              FULL JOIN {agg} a ON a.agent_id = d.agent_id
            WHERE coalesce(d.l, 0) <> coalesce(a.total_len, 0)""",
        "document frequencies differ from the postings": f"""
            SELECT count(*) FROM (SELECT agent_id, term, count(*) AS n FROM {post}
              GROUP BY 1, 2) p FULL JOIN {term} t ON t.agent_id = p.agent_id AND t.term = p.term
            WHERE coalesce(p.n, 0) <> coalesce(t.df, 0)""",
    }
    problems = tuple(
        f"{what} ({n} agents or terms)"
        for what, sql in mismatched.items()
        if (n := _scalar(cursor, sql))
    )
    return Bm25Check(
        corpus=name,
        table=table,
        documents=_scalar(cursor, f"SELECT count(*) FROM {doc}"),
        agents=_scalar(cursor, f"SELECT count(*) FROM {agg} WHERE n_docs > 0"),
        problems=problems,
    )


def bm25_checks(*, using: str) -> list[Bm25Check]:
    """Every keyword corpus's side tables checked against its rows (PostgreSQL only)."""
    if connections[using].vendor != "postgresql":
        return []
    seen: set[str] = set()
    out = []
    with connections[using].cursor() as cursor:
        for corpus in all_corpora():
            if corpus.text_fields and corpus.table not in seen:
                seen.add(corpus.table)
                out.append(_check(cursor, corpus.name, corpus.table, corpus.agent_column))
    return out


def bm25_statistics(*, using: str) -> dict[str, list[tuple]]:
    """Per keyword table, (agent, documents, total length, terms) for every agent: equal on two
    PostgreSQL databases holding the same rows."""
    if connections[using].vendor != "postgresql":
        return {}
    out: dict[str, list[tuple]] = {}
    with connections[using].cursor() as cursor:
        for corpus in all_corpora():
            if corpus.text_fields and corpus.table not in out:
                _, term, agg = bm25_tables(corpus.table)
                cursor.execute(
                    f"SELECT a.agent_id, a.n_docs, a.total_len, "
                    f"(SELECT count(*) FROM {term} t WHERE t.agent_id = a.agent_id AND t.df > 0) "
                    f"FROM {agg} a WHERE a.n_docs > 0 ORDER BY 1"
                )
                out[corpus.table] = [tuple(r) for r in cursor.fetchall()]
    return out
