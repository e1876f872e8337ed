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

This module embeds texts; the pipeline's writes are in apps/search/services/ (row_embedding,
vectors), its reads in apps/search/selectors/embedding_backlogs.py, and the tasks are queued
from apps/search/embedding_queue.py, which sits above apps/search/tasks.py (the sweep takes
its task as a parameter), so no module of the pipeline imports one that imports it.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from django.conf import settings

from apps.providers.embeddings import (
    EMBEDDING_DIMENSIONS,
    Embedder,
    EmbeddingError,
    TokenEmbedder,
    get_embedder,
    vector_label,
)
from apps.search.corpora import Corpus, get_corpus
from apps.search.token_states import token_space

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
            check_dimensions(embedder)
            # token_space gave a label: the embedder keeps token states
            [found] = cast(TokenEmbedder, embedder).embed_with_tokens([text])
            vector = np.asarray(found.vector, dtype=np.float32)
            return Embedding(vector, vector_label(embedder), "", found.codes, space.label)
        vector = embed_checked(embedder, [text])[0]
    except EmbeddingError as exc:
        return Embedding(vector=None, model="", error=str(exc)[:2000] or "embedding failed")
    return Embedding(vector=vector, model=vector_label(embedder), error="")


def embed_checked(embedder: Embedder, texts: list[str]) -> list[np.ndarray]:
    check_dimensions(embedder)
    return [np.asarray(v, dtype=np.float32) for v in embedder.embed(texts)]


def check_dimensions(embedder: Embedder) -> None:
    if embedder.dimensions != EMBEDDING_DIMENSIONS:
        raise EmbeddingError(
            f"{vector_label(embedder)} makes {embedder.dimensions}-d vectors; the store keeps "
            f"{EMBEDDING_DIMENSIONS}-d"
        )


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
