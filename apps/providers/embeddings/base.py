"""The embedding interface every embedder implements."""

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


class EmbeddingError(Exception):
    """An embedder could not produce vectors (model files, server, network or response)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of `dimensions` floats.

    `name` identifies the vector space (stored beside each vector): two embedders with the
    same name and dimensions must produce comparable vectors.
    """

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in input order; raises EmbeddingError."""
        ...


def check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list; a bare string is refused because it is a sequence of characters."""
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single str")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"embed() texts[{i}] is {type(text).__name__}, not str")
    return texts
