"""Token states of corpus rows (`Corpus.tokens`): written by the embedding pipeline beside
each vector, read by the reranking stage, counted for /search/status.

A row's states are current when their label is the configured embedder's token space; rows
with a current vector and no current states are the backfill backlog, which the embed
pending sweep and `manage.py reembed` work through like missing vectors.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import Q

from apps.core.meta import concrete_field, field_column
from apps.core.replicas import read_connection
from apps.providers.embeddings import (
    Embedder,
    TokenEmbedder,
    TokenStateError,
    get_embedder,
    vector_label,
)
from apps.providers.embeddings.token_embedder import unit_rows
from apps.search.corpora import Corpus, get_corpus


@dataclass(frozen=True)
class Space:
    """The token space a corpus's rows get from the configured embedder: "" when the corpus
    keeps none or the embedder has no token capability; `error` when the capability fails."""

    label: str = ""
    error: str = ""


@dataclass(frozen=True)
class TokenBacklog:
    corpus: str
    space: str  # "" when no states are kept (see `error`)
    stored: int  # rows with a current vector and current states
    pending: int  # rows with a current vector and no current states (the backfill)
    error: str = ""


def token_space(corpus: Corpus, embedder: Embedder | None = None) -> Space:
    """The token space for `corpus` under `embedder` (default: the configured one)."""
    if corpus.tokens is None:
        return Space()
    embedder = embedder if embedder is not None else get_embedder()
    if not isinstance(embedder, TokenEmbedder):
        return Space()
    try:
        return Space(label=embedder.token_space())
    except TokenStateError as exc:
        return Space(error=str(exc) or type(exc).__name__)


def missing(corpus: Corpus, space: str) -> Q:
    """Rows of the corpus without states in `space` (none, or of another space)."""
    store = corpus.tokens
    if store is None:
        raise ValueError(f"corpus {corpus.name!r} keeps no token states")
    return ~Q(**{f"{store.related_name}__{store.space_field}": space})


@dataclass(frozen=True)
class StoredStates:
    """Token rows of several corpus rows, stacked: `rows[starts[i] : starts[i] + counts[i]]`
    are `ids[i]`'s (unit float32, tokens x dims; a row may have no tokens)."""

    ids: list
    counts: np.ndarray
    rows: np.ndarray

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)


def states_load(corpus: Corpus, ids: Sequence, space: str) -> StoredStates:
    """The token states in `space` of those of `ids` that have them.

    One plain SQL statement and one numpy pass over all the rows: a hybrid search reads a
    few hundred, and the ORM's per-row conversions would cost more than the read.
    """
    store = corpus.tokens
    if store is None or not ids or not space:
        return StoredStates(ids=[], counts=np.zeros(0, np.int64), rows=np.zeros((0, 0)))
    meta = store.model._meta
    owner = concrete_field(store.model, store.owner_field)
    count = concrete_field(store.model, store.count_field)
    codes = concrete_field(store.model, store.codes_field)
    space_column = field_column(store.model, store.space_field)
    if connection.vendor == "postgresql":  # psycopg adapts the keys itself: one array
        keys, match = [list(ids)], "= ANY(%s)"
    else:
        keys = [owner.get_db_prep_value(pk, connection) for pk in ids]
        match = f"IN ({', '.join(['%s'] * len(keys))})"
    sql = (
        f"SELECT {owner.column}, {count.column}, {codes.column} FROM {meta.db_table} "  # noqa: S608
        f"WHERE {space_column} = %s AND {owner.column} {match}"
    )
    with read_connection().cursor() as cursor:
        cursor.execute(sql, [space, *keys])
        found = cursor.fetchall()
    to_python = corpus.model._meta.pk.to_python
    counts = np.array([n for _pk, n, _codes in found], dtype=np.int64)
    flat = np.frombuffer(b"".join(bytes(c) for _pk, _n, c in found), dtype=np.int8)
    total = int(counts.sum())
    rows = unit_rows(flat.reshape(total, flat.size // total)) if total else np.zeros((0, 0))
    return StoredStates(ids=[to_python(pk) for pk, _n, _c in found], counts=counts, rows=rows)


def token_backlog(
    *, corpus: str, agent_id: int | None = None, embedded: int | None = None
) -> TokenBacklog | None:
    """The corpus's token states for one agent (or all): None when it keeps none.

    `embedded` (rows with a current vector, as `selectors.backlog` counts them) spares
    counting those again: the rows pending states are the embedded ones without them.
    """
    c = get_corpus(corpus)
    if c.tokens is None:
        return None
    space = token_space(c)
    if not space.label:
        return TokenBacklog(corpus=c.name, space="", stored=0, pending=0, error=space.error)
    qs = c.model._default_manager.filter(**{c.vector_fields[1]: vector_label()})
    if agent_id is not None:
        qs = qs.filter(**{f"{c.agent_field}_id": agent_id})
    if embedded is None:
        embedded = qs.count()
    store = c.tokens
    stored = qs.filter(**{f"{store.related_name}__{store.space_field}": space.label}).count()
    return TokenBacklog(corpus=c.name, space=space.label, stored=stored, pending=embedded - stored)
