"""The one embedding pipeline, for every corpus that embeds (apps/search/corpora.py).

Rows are embedded in the background, in batches: services call `schedule_embedding` inside
their transaction, and after commit at most one `search.embed_agent` sweep per agent is
queued (apps/search/sweeps.py). The sweep takes the agent's rows without a vector, per
corpus, up to MEMORYHUB_EMBEDDING_BATCH_SIZE rows (and MEMORYHUB_EMBEDDING_BATCH_CHARS
characters) at a time: one embedder call and one UPDATE per batch. A failure is recorded
on the batch's rows (error text, attempt count) and the sweep is queued again with
exponential backoff up to MEMORYHUB_EMBEDDING_MAX_ATTEMPTS; the `search.embed_pending` beat
sweep queues the same per-agent sweep for every agent with rows left, and `search.embed`
tasks of ids only for rows missing token states (and for `reembed --enqueue`).
Rows past the maximum stay `failed` until `manage.py reembed` (one row that fails for its
own content would otherwise fail every batch it is swept into). The embedder is never
called inside a transaction.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Model, Q, QuerySet

from apps.providers.embeddings import (
    EMBEDDING_DIMENSIONS,
    Embedder,
    EmbeddingError,
    TokenEmbedder,
    get_embedder,
    vector_label,
)
from apps.search.corpora import Corpus, embedding_corpora, get_corpus
from apps.search.token_states import missing, states_write, token_space
from apps.search.vector_write import vectors_write

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Embedding:
    """One text's vector and its label, or the error that stopped it (vector None); with
    its token codes and their space when the corpus keeps token states."""

    vector: np.ndarray | None
    model: str
    error: str
    codes: np.ndarray | None = None
    space: str = ""

    def columns(self) -> dict[str, object]:
        """The Embedded columns (apps/search/models.py) of a row embedded before its write;
        a failure counts as its first attempt."""
        return {
            "embedding": self.vector,
            "embedding_model": self.model,
            "embedding_error": self.error,
            "embedding_attempts": 1 if self.error else 0,
        }


@dataclass(frozen=True)
class EmbedResult:
    embedded: int
    failed: int
    skipped: int  # already current, changed meanwhile, or gone
    attempts: int  # highest attempt count among the failed rows (0 when none failed)
    error: str = ""


@dataclass(frozen=True)
class Backlog:
    """A corpus's vectors: current, stale (another model), pending, failed."""

    corpus: str
    embedded: int
    stale: int  # `manage.py reembed` replaces them
    pending: int  # no vector yet, no failure recorded
    failed: int  # no vector, the last attempt failed


def batch_size() -> int:
    return int(settings.MEMORYHUB_EMBEDDING_BATCH_SIZE)


def batch_chars() -> int:
    return int(settings.MEMORYHUB_EMBEDDING_BATCH_CHARS)


def max_attempts() -> int:
    return int(settings.MEMORYHUB_EMBEDDING_MAX_ATTEMPTS)


def sweep_limit() -> int:
    return int(settings.MEMORYHUB_EMBEDDING_SWEEP_LIMIT)


def sweep_seconds() -> float:
    return float(settings.MEMORYHUB_EMBEDDING_SWEEP_SECONDS)


def retry_delay(attempts: int) -> float:
    """Exponential backoff: base * 2^(attempts-1), capped at an hour."""
    base = float(settings.MEMORYHUB_EMBEDDING_RETRY_SECONDS)
    return min(base * 2 ** max(attempts - 1, 0), 3600.0)


def id_batches(*, corpus: str, ids: Sequence[int | str]) -> list[list[int | str]]:
    """`ids` as the arguments of `search.embed` tasks, `batch_size()` ids each; an unknown
    corpus fails here, in the caller, not in the worker. Task arguments are JSON: integer
    keys stay ints, UUIDs travel as strings."""
    get_corpus(corpus)
    json_ids: list[int | str] = [i if isinstance(i, int) else str(i) for i in ids]
    size = batch_size()
    return [json_ids[start : start + size] for start in range(0, len(json_ids), size)]


def embed_text(text: str, *, corpus: str | None = None) -> Embedding:
    """Embed one document text now (never inside a transaction): for writes that need the
    vector before they commit, such as deduplication. With the `corpus` it is for, its token
    states too when that corpus keeps them. Failures come back as the error."""
    try:
        embedder = get_embedder()
        space = token_space(get_corpus(corpus), embedder) if corpus else None
        if space is not None and space.label:
            _check_dimensions(embedder)
            # token_space gave a label: the embedder keeps token states
            [found] = cast(TokenEmbedder, embedder).embed_with_tokens([text])
            vector = np.asarray(found.vector, dtype=np.float32)
            return Embedding(vector, vector_label(embedder), "", found.codes, space.label)
        vector = _embed_checked(embedder, [text])[0]
    except EmbeddingError as exc:
        return Embedding(vector=None, model="", error=str(exc)[:2000] or "embedding failed")
    return Embedding(vector=vector, model=vector_label(embedder), error="")


def states_replace(*, corpus: str, pk: object, emb: Embedding) -> None:
    """Inside the write that gives a row `emb`'s text: its token states become `emb`'s, or
    none (the embedding pipeline's backfill then makes them), never the old text's."""
    c = get_corpus(corpus)
    if c.tokens is None:
        return
    c.tokens.model._default_manager.filter(**{c.tokens.owner_field: pk}).delete()
    if emb.vector is not None and emb.codes is not None:
        states_write(c, [(pk, emb.codes)], emb.space)


def _embed_checked(embedder: Embedder, texts: list[str]) -> list[np.ndarray]:
    _check_dimensions(embedder)
    return [np.asarray(v, dtype=np.float32) for v in embedder.embed(texts)]


def _check_dimensions(embedder: Embedder) -> None:
    if embedder.dimensions != EMBEDDING_DIMENSIONS:
        raise EmbeddingError(
            f"{vector_label(embedder)} makes {embedder.dimensions}-d vectors; the store keeps "
            f"{EMBEDDING_DIMENSIONS}-d"
        )


def _stale(corpus: Corpus, label: str, space: str = "") -> Q:
    """Rows lacking a vector of `label`, or (with a token space) current token states."""
    vector_field, model_field = corpus.vector_fields
    q = Q(**{f"{vector_field}__isnull": True}) | ~Q(**{model_field: label})
    return q | missing(corpus, space) if space else q


def corpus_embed(*, corpus: str, ids: Sequence, force: bool = False) -> EmbedResult:
    """Embed the rows lacking a vector of the current model, or lacking token states of its
    token space when the corpus keeps them (all of the rows with `force`).

    Idempotent. Batches as `embed_rows`; an EmbeddingError is recorded on the batch that
    met it and on the rows after it (error, attempts + 1): the caller decides about
    retrying them all.
    """
    c = get_corpus(corpus)
    if c.embed is None:
        raise ValueError(f"corpus {c.name!r} keeps no vectors")
    embedder = get_embedder()
    qs = c.model._default_manager.filter(pk__in=list(ids))
    if not force:
        qs = qs.filter(_stale(c, vector_label(embedder), token_space(c, embedder).label))
    rows = list(qs.only("pk", *c.embed_fields).order_by(*c.order_fields))
    skipped = len(set(ids)) - len(rows)
    embedded = 0
    while rows:
        batch = within_budget(c, rows)
        result = embed_rows(c, batch)
        if result.failed:
            rest = [row.pk for row in rows[len(batch) :]]
            if rest:
                _record_failure(c, rest, result.error, 0)
            return EmbedResult(
                embedded=embedded,
                failed=result.failed + len(rest),
                skipped=skipped + result.skipped,
                attempts=result.attempts,
                error=result.error,
            )
        embedded += result.embedded
        skipped += result.skipped
        rows = rows[len(batch) :]
    return EmbedResult(embedded=embedded, failed=0, skipped=skipped, attempts=0)


def within_budget(c: Corpus, rows: list) -> list:
    """The leading rows whose texts fit MEMORYHUB_EMBEDDING_BATCH_SIZE rows and
    MEMORYHUB_EMBEDDING_BATCH_CHARS characters (always at least one row): one embedder call."""
    size, budget = batch_size(), batch_chars()
    taken, chars = 0, 0
    for row in rows[:size]:
        chars += len(c.embed(row)) if c.embed else 0
        if taken and chars > budget:
            break
        taken += 1
    return rows[:taken]


def embed_rows(c: Corpus, rows: list) -> EmbedResult:
    """Embed these rows (read with their `embed_fields`) in one embedder call and write them
    in one statement, each only if its embedded fields still hold the text that was embedded,
    with their token states when the embedder keeps them. An EmbeddingError is recorded on
    the rows (error, attempts + 1). A token capability that fails (TokenStateError) leaves
    the vectors to be written alone: the rows stay in the token backlog."""
    assert c.embed is not None  # an embedding corpus
    embedder = get_embedder()
    label = vector_label(embedder)
    space = token_space(c, embedder)
    texts = [c.embed(row) for row in rows]
    if space.error:
        logger.warning("%s: vectors without token states: %s", c.name, space.error)
    codes: list[np.ndarray] | None = None
    try:
        if space.label:
            _check_dimensions(embedder)
            found = cast(TokenEmbedder, embedder).embed_with_tokens(texts)  # as embed_text
            vectors = [np.asarray(e.vector, dtype=np.float32) for e in found]
            codes = [e.codes for e in found]
        else:
            vectors = _embed_checked(embedder, texts)
    except EmbeddingError as exc:
        return _record_failure(c, [row.pk for row in rows], str(exc), 0)
    written = _write_vectors(c, rows, vectors, label, codes, space.label)
    return EmbedResult(embedded=written, failed=0, skipped=len(rows) - written, attempts=0)


def _write_vectors(
    c: Corpus,
    rows: list[Model],
    vectors: list[np.ndarray],
    label: str,
    codes: list[np.ndarray] | None,
    space: str,
) -> int:
    """One UPDATE for the batch (apps/search/vector_write.py), then the written rows' states."""
    with transaction.atomic():
        written = vectors_write(c, rows, vectors, label)
        if codes is not None and written:
            index = {row.pk: i for i, row in enumerate(rows)}
            states_write(c, [(pk, codes[index[pk]]) for pk in written], space)
    return len(written)


def _record_failure(c: Corpus, ids: list, error: str, skipped: int) -> EmbedResult:
    error = error[:2000] or "embedding failed"
    manager = c.model._default_manager
    manager.filter(pk__in=ids).update(
        **{c.error_field: error, c.attempts_field: F(c.attempts_field) + 1}
    )
    attempts = max(manager.filter(pk__in=ids).values_list(c.attempts_field, flat=True))
    return EmbedResult(embedded=0, failed=len(ids), skipped=skipped, attempts=attempts, error=error)


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
    qs = c.model._default_manager.filter(**{f"{c.vector_field}__isnull": True}, **under)
    qs = qs.order_by(c.attempts_field, *c.order_fields)
    agents = list(qs.values_list(f"{c.agent_field}_id", flat=True)[:limit])
    backfill: list = []
    space = token_space(c)
    if space.label and len(agents) < limit:
        label = vector_label()
        rows = c.model._default_manager.filter(missing(c, space.label), **under)
        rows = rows.filter(**{c.vector_fields[1]: label}).order_by(*c.order_fields)
        backfill = list(rows.values_list("pk", flat=True)[: limit - len(agents)])
    return PendingWork(len(agents) + len(backfill), frozenset(agents), backfill)


def stale_ids(
    *, corpus: str, label: str, agent_id: int | None = None, include_current: bool = False
) -> list:
    """Rows whose vector is missing or was made by another model than `label`, or whose
    token states are missing (every row with `include_current`), in the corpus's order."""
    c = get_corpus(corpus)
    qs = c.model._default_manager.all()
    if not include_current:
        qs = qs.filter(_stale(c, label, token_space(c).label))
    if agent_id is not None:
        qs = qs.filter(**{f"{c.agent_field}_id": agent_id})
    return list(qs.order_by(*c.order_fields).values_list("pk", flat=True))


def backlog(*, corpus: str, agent_id: int | None = None) -> Backlog:
    """The corpus's vector counts, for one agent or all."""
    c = get_corpus(corpus)
    qs = c.model._default_manager.all()
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
    return c.model._default_manager.filter(**{f"{c.vector_field}__isnull": True})


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
