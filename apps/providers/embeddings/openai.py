"""Embeddings from any OpenAI-compatible server (`POST {URL}/embeddings`)."""

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from apps.providers._http import HttpFailure, check_base_url, post_json
from apps.providers.embeddings.base import EmbeddingError, check_texts
from apps.providers.guard import check_outside_transaction


class OpenAIEmbedder:
    """Vectors from a remote OpenAI-compatible embeddings endpoint, re-normalised locally.

    Requests carry at most `batch_size` texts. Any transport, status or shape problem
    (including a vector that is not `dimensions` long) raises EmbeddingError.
    """

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str = "",
        dimensions: int = 384,
        timeout: float = 30.0,
        batch_size: int = 64,
        send_dimensions: bool = False,
    ) -> None:
        if not model:
            raise ValueError("MODEL is required")
        if int(dimensions) < 1 or float(timeout) <= 0 or int(batch_size) < 1:
            raise ValueError("DIMENSIONS, TIMEOUT and BATCH_SIZE must be positive")
        self.url = check_base_url(url)
        self.name = str(model)
        self.dimensions = int(dimensions)
        self.timeout = float(timeout)
        self.batch_size = int(batch_size)
        # Only models with native shortening (OpenAI text-embedding-3-*) accept "dimensions";
        # other servers may reject the unknown field, so it is opt-in.
        self.send_dimensions = bool(send_dimensions)
        self._api_key = str(api_key or "")

    def __repr__(self) -> str:  # no API key in logs
        return f"OpenAIEmbedder(url={self.url!r}, model={self.name!r}, dims={self.dimensions})"

    def check(self) -> str:
        """Describe the configuration; the server is not contacted."""
        return f"{self.name}, {self.dimensions}-d, via {self.url}/embeddings (not contacted)"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in input order; raises EmbeddingError."""
        check_outside_transaction(f"{self.name} embedding")
        texts = check_texts(texts)
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(texts[start : start + self.batch_size]))
        return vectors

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        # Any: the request's JSON body
        payload: dict[str, Any] = {"model": self.name, "input": batch}
        if self.send_dimensions:
            payload["dimensions"] = self.dimensions
        endpoint = f"{self.url}/embeddings"
        try:
            answer = post_json(endpoint, payload, api_key=self._api_key, timeout=self.timeout)
        except HttpFailure as exc:
            raise EmbeddingError(f"embedding request failed: {exc}") from exc
        items = self._items(answer, endpoint, expected=len(batch))
        return [self._vector(item, endpoint) for item in items]

    # Any: the server's JSON answer (json.loads' own type)
    def _items(self, answer: Any, endpoint: str, *, expected: int) -> list[dict]:
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise EmbeddingError(f"{endpoint} answered without a 'data' list of objects")
        if len(data) != expected:
            raise EmbeddingError(f"{endpoint} returned {len(data)} vectors for {expected} texts")
        # The spec orders by "index", but not every server keeps the input order.
        if all(isinstance(d.get("index"), int) for d in data):
            data = sorted(data, key=lambda d: d["index"])
            if [d["index"] for d in data] != list(range(expected)):
                raise EmbeddingError(f"{endpoint} returned indexes other than 0..{expected - 1}")
        return data

    def _vector(self, item: dict, endpoint: str) -> list[float]:
        raw = item.get("embedding")
        # Checked and normalised in numpy: per-float Python loops cost more than a fast
        # server's whole answer (bench/embed_throughput.py). JSON numbers are int or float;
        # bool is refused although numpy would take it as 1.0.
        if not isinstance(raw, list) or not set(map(type, raw)) <= {int, float}:
            raise EmbeddingError(f"{endpoint} returned an embedding that is not a list of numbers")
        if len(raw) != self.dimensions:
            raise EmbeddingError(
                f"{endpoint} returned {len(raw)}-d vectors for model {self.name!r}, "
                f"configured DIMENSIONS is {self.dimensions}"
            )
        array = np.asarray(raw, dtype=np.float64)
        norm = float(np.sqrt(np.dot(array, array)))
        if not math.isfinite(norm) or norm == 0.0:
            raise EmbeddingError(f"{endpoint} returned a zero or non-finite vector")
        return (array / norm).tolist()
