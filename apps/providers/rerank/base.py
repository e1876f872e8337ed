"""The reranking interface: scores a query against candidate texts, nothing else."""

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


class RerankError(Exception):
    """A reranker could not score (model files, checksum, inference)."""


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each text answers a query; only the order of the scores matters."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text (higher is more relevant), in input order; raises RerankError.

        A score may depend on the other texts of the call (they are one query's candidates).
        """
        ...
