"""A deterministic embedder for tests and development: no model, no network, microseconds."""

import hashlib
import math
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from apps.providers.embeddings.base import check_texts
from apps.providers.embeddings.token_embedder import QueryEmbedding, TokenEmbedding, quantise
from apps.providers.guard import check_outside_transaction
from apps.providers.stopwords import STOPWORDS

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
# Trigrams make "cats" resemble "cat" a little; weighted low so shared words dominate.
_TRIGRAM_WEIGHT = 0.25
TOKEN_DIMS = 32


@lru_cache(maxsize=65536)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    # blake2b rather than hash(): str hashes are salted per process, vectors must not be.
    value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    # A hashed sign keeps collisions from piling up in one direction.
    return value % dimensions, 1.0 if value >> 63 else -1.0


def _features(text: str) -> list[tuple[str, float]]:
    features = []
    for word in _WORD.findall(text.lower()):
        features.append(("w:" + word, _WORD_WEIGHT))
        padded = f"<{word}>"
        features.extend(("t:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return features


class HashEmbedder:
    """Hashed bag of lower-cased words and their character trigrams, L2-normalised.

    Texts that share words score higher cosine than unrelated texts; same text, same vector,
    in every process. A text with no word characters maps to one fixed unit vector.
    """

    name = "fake-hash"

    def __init__(self, *, dimensions: int = 384) -> None:
        if int(dimensions) < 8:
            raise ValueError(f"DIMENSIONS must be >= 8, got {dimensions!r}")
        self.dimensions = int(dimensions)

    def __repr__(self) -> str:
        return f"HashEmbedder(dimensions={self.dimensions})"

    def check(self) -> str:
        """Nothing to load; always healthy."""
        return f"{self.name}, {self.dimensions}-d, deterministic (tests and development only)"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in input order."""
        check_outside_transaction(f"{self.name} embedding")
        return [_hashed(text, self.dimensions) for text in check_texts(texts)]

    def token_space(self) -> str:
        """Its token vectors: each word hashed like a one-word text, TOKEN_DIMS wide."""
        return f"{self.name}/words{TOKEN_DIMS}@int8"

    def embed_with_tokens(self, texts: Sequence[str]) -> list[TokenEmbedding]:
        """embed()'s vectors, each with one int8 row per word of the text."""
        vectors = self.embed(texts)
        return [
            TokenEmbedding(vector=np.asarray(v, dtype=np.float32), codes=quantise(_words(t)))
            for v, t in zip(vectors, texts, strict=True)
        ]

    def embed_query_with_tokens(self, text: str) -> QueryEmbedding:
        """The vector, and a row per content word (every word if none is)."""
        [vector] = self.embed([text])
        words = _WORD.findall(text.lower())
        content = [w for w in words if w not in STOPWORDS] or words
        rows = _words(" ".join(content))
        rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        return QueryEmbedding(
            vector=np.asarray(vector, dtype=np.float32),
            tokens=rows.astype(np.float32),
            token_space=self.token_space(),
        )


def _hashed(text: str, dimensions: int) -> list[float]:
    """The unit vector of a text's hashed words and trigrams."""
    vector = [0.0] * dimensions
    features = _features(text) or [("<empty>", 1.0)]
    for feature, weight in features:
        index, sign = _slot(feature, dimensions)
        vector[index] += sign * weight
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:  # every feature cancelled out; still honour the unit-length contract
        index, _sign = _slot("<empty>", dimensions)
        vector[index], norm = 1.0, 1.0
    return [v / norm for v in vector]


def _words(text: str) -> np.ndarray:
    """One TOKEN_DIMS-wide hashed vector per word of the text (words x TOKEN_DIMS)."""
    words = _WORD.findall(text.lower())
    rows = [_hashed(w, TOKEN_DIMS) for w in words]
    return np.asarray(rows, dtype=np.float32).reshape(len(words), TOKEN_DIMS)
