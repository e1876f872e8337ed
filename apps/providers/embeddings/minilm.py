"""all-MiniLM-L6-v2 run offline: int8 ONNX weights on onnxruntime, vendored WordPiece tokenizer.

Matches sentence-transformers' pipeline: truncation at 256 tokens, mean pooling over the
attention mask, L2 normalisation. Measured against the fp32 model in docs/providers.md.
"""

import threading
from collections.abc import Sequence
from dataclasses import dataclass
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
from apps.providers.embeddings.base import EmbeddingError, check_texts
from apps.providers.guard import check_outside_transaction

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model


@dataclass(frozen=True)
class _Runtime:
    tokenizer: object  # tokenizers.Tokenizer
    session: object  # onnxruntime.InferenceSession


# One runtime per (model file, thread count) per process: the session holds ~90 MB and takes
# ~0.5 s to build, and both the session and the tokenizer are safe to share between threads.
_runtimes: dict[tuple[str, int], _Runtime] = {}
_runtimes_lock = threading.Lock()


def _load_runtime(path: Path, threads: int) -> _Runtime:
    import onnxruntime
    from tokenizers import Tokenizer

    verify_sha256(path, MODEL_SHA256)
    verify_sha256(TOKENIZER_PATH, TOKENIZER_SHA256)
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    # No fixed length: pad each batch only to its longest text.
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - not a password

    options = onnxruntime.SessionOptions()
    # Pinned because on a 2-core box a worker using both cores while the web process also
    # runs halves throughput (docs/providers.md); scale with processes, not threads.
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return _Runtime(tokenizer=tokenizer, session=session)


def _runtime(path: Path, threads: int) -> _Runtime:
    key = (str(path), threads)
    runtime = _runtimes.get(key)
    if runtime is None:
        with _runtimes_lock:
            runtime = _runtimes.get(key)
            if runtime is None:
                try:
                    runtime = _load_runtime(path, threads)
                except AssetError as exc:
                    raise EmbeddingError(f"MiniLM model files: {exc}") from exc
                except Exception as exc:  # onnxruntime and tokenizers raise their own types
                    raise EmbeddingError(f"could not load MiniLM from {path}: {exc}") from exc
                _runtimes[key] = runtime
    return runtime


def runtime_options(threads: object, batch_size: object) -> tuple[int, int]:
    """A MiniLM model's THREADS and BATCH_SIZE as ints; ValueError naming a bad one."""
    if int(threads) < 1:
        raise ValueError(f"THREADS must be >= 1, got {threads!r}")
    if int(batch_size) < 1:
        raise ValueError(f"BATCH_SIZE must be >= 1, got {batch_size!r}")
    return int(threads), int(batch_size)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) computed in this process; nothing is downloaded.

    The model loads on first use, once per process; `threads` pins onnxruntime's intra-op
    threads and `batch_size` bounds the texts run through the model at once.
    """

    name = MODEL_NAME
    dimensions = DIMENSIONS

    def __init__(
        self, *, threads: int = 1, batch_size: int = 32, model_path: str | None = None
    ) -> None:
        self.threads, self.batch_size = runtime_options(threads, batch_size)
        # MODEL_PATH is for machines that cannot install the wheel; the pinned sha256 still
        # applies, so only the same file is accepted.
        self._model_path = Path(model_path) if model_path else None

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(threads={self.threads}, batch_size={self.batch_size})"

    @property
    def model_path(self) -> Path:
        try:
            return self._model_path or model_path()
        except AssetError as exc:
            raise EmbeddingError(str(exc)) from exc

    def check(self) -> str:
        """Verify the model and tokenizer files against their pinned hashes, without running."""
        path = self.model_path
        try:
            verify_sha256(path, MODEL_SHA256)
            verify_sha256(TOKENIZER_PATH, TOKENIZER_SHA256)
        except AssetError as exc:
            raise EmbeddingError(str(exc)) from exc
        return f"{self.name} int8 ONNX, {self.dimensions}-d, sha256 ok, {self.threads} thread(s)"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in input order; raises EmbeddingError."""
        check_outside_transaction(f"{self.name} embedding")
        texts = check_texts(texts)
        if not texts:
            return []
        runtime = _runtime(self.model_path, self.threads)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        # Longest first, so each batch holds texts of similar length and pads little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._embed_batch(runtime, [texts[i] for i in idx])
        return out.tolist()

    def _embed_batch(self, runtime: _Runtime, batch: list[str]) -> np.ndarray:
        try:
            encodings = runtime.tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            (hidden,) = runtime.session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbeddingError(f"MiniLM inference failed: {exc}") from exc
        weights = mask[..., None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)
