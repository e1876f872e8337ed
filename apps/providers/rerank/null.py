"""The reranker that ranks nothing: `MEMORYHUB_PROVIDERS["rerank"] = None` turns reranking
off for every agent, whatever their settings say."""

from collections.abc import Sequence


class NullReranker:
    """Equal scores for every text, so the fused order stands."""

    name = "none"

    def check(self) -> str:
        return "none: reranking is off for every agent"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """0.0 for every text."""
        return [0.0] * len(texts)
