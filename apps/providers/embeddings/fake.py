"""A deterministic embedder for tests and development: no model, no network, microseconds."""

import hashlib
import math
import re
from collections.abc import Sequence
from functools import lru_cache

from apps.providers.embeddings.base import check_texts
from apps.providers.guard import check_outside_transaction

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
# Trigrams make "cats" resemble "cat" a little; weighted low so shared words dominate.
_TRIGRAM_WEIGHT = 0.25


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
        return [self._embed_one(text) for text in check_texts(texts)]

    def _embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        features = _features(text) or [("<empty>", 1.0)]
        for feature, weight in features:
            index, sign = _slot(feature, self.dimensions)
            vector[index] += sign * weight
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:  # every feature cancelled out; still honour the unit-length contract
            index, _sign = _slot("<empty>", self.dimensions)
            vector[index], norm = 1.0, 1.0
        return [v / norm for v in vector]
