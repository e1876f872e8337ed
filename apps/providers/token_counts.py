"""Offline token counts for stored messages.

The counts are WordPiece tokens of all-MiniLM-L6-v2 (the vendored `tokenizer.json`, no
truncation, no [CLS]/[SEP]). They are an estimate of an LLM's token usage, chosen because
they need no network: tiktoken downloads its BPE tables at run time. Only if the tokenizer
file cannot be loaded do the counts fall back to ceil(UTF-8 bytes / 4).
"""

import logging
import math
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from apps.providers.embeddings.assets import TOKENIZER_PATH, TOKENIZER_SHA256, verify_sha256

if TYPE_CHECKING:  # imported on first use: loading it takes a while
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

_tokenizer: "Tokenizer | None" = None
_loaded = False
_lock = threading.Lock()


def _load() -> "Tokenizer":
    from tokenizers import Tokenizer

    verify_sha256(TOKENIZER_PATH, TOKENIZER_SHA256)
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    # The file ships with truncation and padding at 128 for the embedder; counts need neither.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _get_tokenizer() -> "Tokenizer | None":
    global _tokenizer, _loaded
    if not _loaded:
        with _lock:
            if not _loaded:
                try:
                    _tokenizer = _load()
                except Exception:
                    # Counting must never fail a request; the estimate is logged once.
                    logger.exception("token counter: tokenizer unavailable, estimating by bytes")
                    _tokenizer = None
                _loaded = True
    return _tokenizer


def _estimate(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4)


def count_tokens(text: str) -> int:
    """WordPiece tokens of all-MiniLM-L6-v2 in `text`, without special tokens (0 for "")."""
    if not text:
        return 0
    tokenizer = _get_tokenizer()
    if tokenizer is None:
        return _estimate(text)
    return len(tokenizer.encode(text, add_special_tokens=False))


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """count_tokens() for each text, encoded in one call (parallel in the tokenizer)."""
    texts = list(texts)
    tokenizer = _get_tokenizer()
    if tokenizer is None:
        return [_estimate(text) if text else 0 for text in texts]
    if not texts:
        return []
    encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
    return [len(encoding) for encoding in encodings]
