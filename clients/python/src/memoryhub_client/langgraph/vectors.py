"""MemoryHubStore(index=...): LangGraph's semantic search, by the server's embedder
(`ServerIndex`, index without `embed`) or with the caller's (`VectorIndex`).

Without `embed`, memoryhub embeds each indexed item with its own model: a put sends its
field list (its own `index=[fields]`, else the store's `fields`) as the entry's `index`, and
a search asks GET /entries/search for the hybrid ranking within the namespace's folder.

The caller brings `embed` (LangChain Embeddings, or a function of texts); the store ranks
the items under a search's namespace prefix (the op's user sees, `filter` applied) by cosine
similarity to the query, locally: each item's score is the best of its indexed texts' (the
JSON paths `fields` name, "$" the whole value), as LangGraph's own stores do. Vectors are
kept per text in the store object, so a text is embedded once per process. Items put with
`index=False` come after the scored ones with score None. A put's own `index=[fields]` is
remembered by the store object that made it (another process ranks that item by the store's
`fields`): memoryhub keeps no per-item field list.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig, ensure_embeddings, get_text_at_path, tokenize_path

# Texts whose vectors a store keeps (per process); past it, the oldest are dropped.
CACHE_SIZE = 20_000
# The server's vectors (memoryhub embeds with all-MiniLM-L6-v2, or a model of its size).
SERVER_DIMS = 384


def _fields(config: IndexConfig) -> list[str] | None:
    # `text_fields` is langgraph-checkpoint-sqlite's name for `fields`.
    named: Any = config.get("fields") or dict(config).get("text_fields")  # a JSON path list
    return [str(f) for f in named] if named else None


def server_side(config: object) -> bool:
    """An index config the server embeds for: LangGraph's, without `embed`."""
    return isinstance(config, dict) and "dims" in config and config.get("embed") is None


class ServerIndex:
    """index={"dims": 384, "fields": [...]} without `embed`: what each put asks the server
    to embed. `dims` must be the server's."""

    def __init__(self, config: IndexConfig) -> None:
        if config["dims"] != SERVER_DIMS:
            raise ValueError(
                f"index dims {config['dims']!r} is not the server's {SERVER_DIMS} (memoryhub "
                f"embeds store items with its own {SERVER_DIMS}-d model, MiniLM): give "
                f"dims={SERVER_DIMS}, or `embed` to rank with your own embedder"
            )
        self.config: IndexConfig = config
        self.fields = _fields(config)

    def put_index(self, index: bool | Sequence[str] | None) -> bool | list[str]:
        """A put's entry `index`: False, its own fields, else the store's (True: the whole
        value, as "$" says)."""
        if index is False:
            return False
        if isinstance(index, (list, tuple)):
            return [str(f) for f in index]
        return list(self.fields) if self.fields else True


class VectorIndex:
    """An index config made usable: its embedder, its fields and the vectors seen so far."""

    def __init__(self, config: IndexConfig) -> None:
        if not isinstance(config, dict) or "dims" not in config:
            raise ValueError("index must be LangGraph's IndexConfig: {'dims': ..., 'embed': ...}")
        if config.get("embed") is None:
            raise ValueError("a client-side index needs `embed` (without it the server embeds)")
        self.config: IndexConfig = config
        self.embeddings: Embeddings = ensure_embeddings(config["embed"])
        self.fields: list[str] = _fields(config) or ["$"]
        self._put_fields: dict[str, list[str]] = {}
        self._vectors: dict[str, list[float]] = {}

    def remember_put(self, name: str, index: bool | Sequence[str] | None) -> None:
        """Note a put's own field list (None or False: the store's fields apply)."""
        if isinstance(index, (list, tuple)):
            self._put_fields[name] = [str(f) for f in index]
        else:
            self._put_fields.pop(name, None)

    def texts(self, name: str, value: dict[str, Any]) -> list[str]:
        """The item's indexed texts: each field's text (a list's elements one by one)."""
        out = []
        for path in self._put_fields.get(name, self.fields):
            out += get_text_at_path(value, path if path == "$" else tokenize_path(path))
        return [t for t in out if t]

    def missing(self, texts: Sequence[str]) -> list[str]:
        return list(dict.fromkeys(t for t in texts if t not in self._vectors))

    def keep(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        if len(texts) != len(vectors):
            raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
        for text, vector in zip(texts, vectors, strict=True):
            self._vectors[text] = [float(x) for x in vector]
        while len(self._vectors) > CACHE_SIZE:
            del self._vectors[next(iter(self._vectors))]

    def score(self, query_vector: Sequence[float], texts: Sequence[str]) -> float | None:
        """The best cosine similarity of the query to the texts (None: nothing indexed)."""
        found = [cosine(query_vector, self._vectors[t]) for t in texts if t in self._vectors]
        return max(found) if found else None


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms > 0 else 0.0


def ranked(scored: list[tuple[float | None, Any]]) -> list[tuple[float | None, Any]]:
    """Best score first (a stable sort: ties keep the listing's order), unscored last."""
    with_score = [s for s in scored if s[0] is not None]
    without = [s for s in scored if s[0] is None]
    return sorted(with_score, key=lambda s: -(s[0] or 0.0)) + without
