"""The embedding pipeline's writes (apps/search/embedding.py): rows embedded in batches, one
statement per batch, failures recorded on their rows; and a row's token states replaced
inside the write that changes its text."""

import logging
from collections.abc import Sequence
from typing import cast

import numpy as np
from django.db import transaction
from django.db.models import F, Model

from apps.providers.embeddings import (
    EmbeddingError,
    TokenEmbedder,
    get_embedder,
    vector_label,
)
from apps.search.corpora import Corpus, get_corpus
from apps.search.embedding import (
    Embedding,
    EmbedResult,
    check_dimensions,
    embed_checked,
    within_budget,
)
from apps.search.selectors.embedding_backlogs import stale_filter
from apps.search.services.vector_writes import states_write, vectors_write
from apps.search.token_states import token_space

logger = logging.getLogger(__name__)


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
    qs = c.embeddable().filter(pk__in=list(ids))
    if not force:
        qs = qs.filter(stale_filter(c, vector_label(embedder), token_space(c, embedder).label))
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
            check_dimensions(embedder)
            found = cast(TokenEmbedder, embedder).embed_with_tokens(texts)  # as embed_text
            vectors = [np.asarray(e.vector, dtype=np.float32) for e in found]
            codes = [e.codes for e in found]
        else:
            vectors = embed_checked(embedder, texts)
    except EmbeddingError as exc:
        return _record_failure(c, [row.pk for row in rows], str(exc), 0)
    written = _write_vectors(c, rows, vectors, label, codes, space.label)
    return EmbedResult(embedded=written, failed=0, skipped=len(rows) - written, attempts=0)


def states_replace(*, corpus: str, pk: object, emb: Embedding) -> None:
    """Inside the write that gives a row `emb`'s text: its token states become `emb`'s, or
    none (the embedding pipeline's backfill then makes them), never the old text's."""
    c = get_corpus(corpus)
    if c.tokens is None:
        return
    c.tokens.model._default_manager.filter(**{c.tokens.owner_field: pk}).delete()
    if emb.vector is not None and emb.codes is not None:
        states_write(c, [(pk, emb.codes)], emb.space)


def _write_vectors(
    c: Corpus,
    rows: list[Model],
    vectors: list[np.ndarray],
    label: str,
    codes: list[np.ndarray] | None,
    space: str,
) -> int:
    """One UPDATE for the batch (vector_writes.py), then the written rows' states."""
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
