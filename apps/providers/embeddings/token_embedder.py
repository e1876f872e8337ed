"""Token states: an optional capability of an embedder, for late-interaction reranking.

An embedder that has it (`TokenEmbedder`) returns, from the same forward pass as each
document's vector, the document's token vectors in a small space of its own (e.g. MiniLM's
last-layer states projected to a few dozen dimensions), quantised to int8; and for a query,
its vector with the query's content-word states. The search layer stores the documents' codes
and scores MaxSim from them at query time, so reranking runs no model (docs/search.md,
"Reranking"). Embedders without it are reranked by nothing; their hits keep the fused order.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from apps.providers.embeddings.base import EmbeddingError
from apps.providers.stopwords import STOPWORDS

_WORDLIKE = re.compile(r"[^\W_]")


class TokenStateError(EmbeddingError):
    """The token capability cannot run (its projection file is missing or not the pinned one);
    vectors still can."""


@dataclass(frozen=True)
class TokenEmbedding:
    """A document's vector and its token codes: one int8 row per kept token."""

    vector: np.ndarray  # (dimensions,) float32, unit length
    codes: np.ndarray  # (tokens, token dims) int8


@dataclass(frozen=True)
class QueryEmbedding:
    """A query's vector and, when the embedder keeps token states, its content words' states
    (unit rows, float32) in `token_space`; `token_error` says why they are missing."""

    vector: np.ndarray
    tokens: np.ndarray | None = None
    token_space: str = ""
    token_error: str = ""


@runtime_checkable
class TokenEmbedder(Protocol):
    """An embedder that also keeps token states (the capability is optional)."""

    def token_space(self) -> str:
        """The label of its token vectors ("name/projection@int8"): states of two labels are
        never compared. Raises TokenStateError when the capability cannot run."""
        ...

    def embed_with_tokens(self, texts: Sequence[str]) -> list[TokenEmbedding]:
        """embed()'s vectors, each with the text's token codes; raises EmbeddingError."""
        ...

    def embed_query_with_tokens(self, text: str) -> QueryEmbedding:
        """One model run for a query: its vector and content-word states (None, with
        `token_error`, when only the token part failed); raises EmbeddingError."""
        ...


def quantise(states: np.ndarray) -> np.ndarray:
    """int8 codes of each row, scaled so its largest component is ±127.

    Only the direction of a token vector matters (MaxSim compares cosines), so the per-token
    scale is not stored: it is the norm of the codes, recomputed when they are read.
    """
    states = np.asarray(states, dtype=np.float32)
    if states.size == 0:
        return np.zeros(states.shape, dtype=np.int8)
    top = np.maximum(np.abs(states).max(axis=1, keepdims=True), 1e-12)
    return np.round(states * (127.0 / top)).astype(np.int8)


def unit_rows(codes: np.ndarray) -> np.ndarray:
    """Stored codes back to unit-length float32 rows (an all-zero row stays zero)."""
    rows = np.asarray(codes, dtype=np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def kept_token(token: str, special: frozenset[str]) -> bool:
    """A document token worth a stored row: not a special token, has a letter or digit, not
    a stopword. Query stopwords are never matched (`query_rows`), and a document's
    stopwords rarely are the best match of a content word: dropping them halves the rows
    for 0.003 of LoCoMo dev R@10 (docs/search.md, "Reranking")."""
    return token not in special and bool(_WORDLIKE.search(token)) and token not in STOPWORDS


def query_rows(tokens: Sequence[str], special: frozenset[str]) -> list[int]:
    """Positions of a query's content tokens (the BM25 leg's stopwords dropped, so the two
    stages agree on what a question is about); every word token if it has no content."""
    words = [i for i, t in enumerate(tokens) if t not in special and _WORDLIKE.search(t)]
    content = [i for i in words if tokens[i] not in STOPWORDS]
    return content or words
