"""Reads of the embedding pipeline's state: the rows still to embed (for the sweeps and
`manage.py reembed`) and the backlog counts (for /healthz, /search/status and the admin)."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from apps.providers.embeddings import vector_label
from apps.search.corpora import Corpus, embedding_corpora, get_corpus
from apps.search.embedding import max_attempts
from apps.search.token_states import missing, token_space


def stale_filter(corpus: Corpus, label: str, space: str = "") -> Q:
    """Rows lacking a vector of `label`, or (with a token space) current token states."""
    vector_field, model_field = corpus.vector_fields
    q = Q(**{f"{vector_field}__isnull": True}) | ~Q(**{model_field: label})
    return q | missing(corpus, space) if space else q


@dataclass(frozen=True)
class PendingWork:
    """What the beat sweep found in one corpus: the agents with rows still without a vector
    (at most `limit` rows looked at), and rows whose token states are missing."""

    rows: int
    agent_ids: frozenset[int]
    backfill_ids: list


def pending_work(*, corpus: str, limit: int) -> PendingWork:
    """Up to `limit` rows still without a vector and under the attempt limit (fewest attempts
    first) and their agents; then, up to the same limit, rows with a current vector but no
    current token states (the backfill of rows embedded before their corpus kept states)."""
    c = get_corpus(corpus)
    under = {f"{c.attempts_field}__lt": max_attempts()}
    qs = c.embeddable().filter(**{f"{c.vector_field}__isnull": True}, **under)
    qs = qs.order_by(c.attempts_field, *c.order_fields)
    agents = list(qs.values_list(f"{c.agent_field}_id", flat=True)[:limit])
    backfill: list = []
    space = token_space(c)
    if space.label and len(agents) < limit:
        label = vector_label()
        rows = c.embeddable().filter(missing(c, space.label), **under)
        rows = rows.filter(**{c.vector_fields[1]: label}).order_by(*c.order_fields)
        backfill = list(rows.values_list("pk", flat=True)[: limit - len(agents)])
    return PendingWork(len(agents) + len(backfill), frozenset(agents), backfill)


def stale_ids(
    *, corpus: str, label: str, agent_id: int | None = None, include_current: bool = False
) -> list:
    """Rows whose vector is missing or was made by another model than `label`, or whose
    token states are missing (every row with `include_current`), in the corpus's order."""
    c = get_corpus(corpus)
    qs = c.embeddable()
    if not include_current:
        qs = qs.filter(stale_filter(c, label, token_space(c).label))
    if agent_id is not None:
        qs = qs.filter(**{f"{c.agent_field}_id": agent_id})
    return list(qs.order_by(*c.order_fields).values_list("pk", flat=True))


@dataclass(frozen=True)
class Backlog:
    """A corpus's vectors: current, stale (another model), pending, failed."""

    corpus: str
    embedded: int
    stale: int  # `manage.py reembed` replaces them
    pending: int  # no vector yet, no failure recorded
    failed: int  # no vector, the last attempt failed


def backlog(*, corpus: str, agent_id: int | None = None) -> Backlog:
    """The corpus's vector counts, for one agent or all."""
    c = get_corpus(corpus)
    qs = c.embeddable()
    if agent_id is not None:
        qs = qs.filter(**{f"{c.agent_field}_id": agent_id})
    (v, m), e = c.vector_fields, c.error_field
    label = vector_label()
    has_vector = Q(**{f"{v}__isnull": False})
    no_vector = Q(**{f"{v}__isnull": True})
    counts = qs.aggregate(
        embedded=Count("pk", filter=has_vector & Q(**{m: label})),
        stale=Count("pk", filter=has_vector & ~Q(**{m: label})),
        pending=Count("pk", filter=no_vector & Q(**{e: ""})),
        failed=Count("pk", filter=no_vector & ~Q(**{e: ""})),
    )
    return Backlog(corpus=c.name, **counts)


@dataclass(frozen=True)
class Pending:
    """A corpus's rows still without a vector: never tried yet, or failed."""

    corpus: str
    pending: int
    failed: int


def _without_vector(c: Corpus) -> QuerySet:
    return c.embeddable().filter(**{f"{c.vector_field}__isnull": True})


def _pending_failed(c: Corpus) -> dict[str, Count]:
    """Rows without a vector: never tried yet (no error), or failed (an error recorded)."""
    e = c.error_field
    return {
        "pending": Count("pk", filter=Q(**{e: ""})),
        "failed": Count("pk", filter=~Q(**{e: ""})),
    }


def backlogs() -> list[Pending]:
    """Every embedding corpus's backlog over all agents, by corpus name (for /healthz and the
    admin). Only rows without a vector are read, which the partial "pending embedding"
    indexes serve, so the cost follows the backlog, not the size of the store."""
    out = []
    for c in embedding_corpora():
        counts = _without_vector(c).aggregate(**_pending_failed(c))
        out.append(Pending(corpus=c.name, **counts))
    return out


def backlogs_by_agent(*, agent_ids: Sequence[int]) -> dict[int, list[Pending]]:
    """The same, per agent (one query per corpus): every corpus for every agent, zeros
    included, in corpus order."""
    out: dict[int, list[Pending]] = {pk: [] for pk in agent_ids}
    for c in embedding_corpora():
        agent = f"{c.agent_field}_id"
        rows = (
            _without_vector(c)
            .filter(**{f"{agent}__in": list(agent_ids)})
            .values(agent)
            .annotate(**_pending_failed(c))
        )
        found = {row[agent]: row for row in rows}
        for pk in agent_ids:
            row = found.get(pk, {"pending": 0, "failed": 0})
            out[pk].append(Pending(corpus=c.name, pending=row["pending"], failed=row["failed"]))
    return out
