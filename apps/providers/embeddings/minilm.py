"""all-MiniLM-L6-v2 run offline: int8 ONNX weights on onnxruntime, vendored WordPiece tokenizer.

Matches sentence-transformers' pipeline: truncation at 256 tokens, mean pooling over the
attention mask, L2 normalisation. Measured against the fp32 model in docs/providers.md.
It keeps token states too (apps/providers/embeddings/token_embedder.py): the last-layer states that
mean pooling averages, projected to TOKEN_DIMS by a shipped, checksummed projection
(fitted by bench/fit_token_projection.py) and quantised to int8.
"""

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from apps.providers.embeddings.assets import (
    MODEL_SHA256,
    TOKEN_PROJECTION_PATH,
    TOKEN_PROJECTION_SHA256,
    TOKENIZER_PATH,
    TOKENIZER_SHA256,
    AssetError,
    model_path,
    verify_sha256,
)
from apps.providers.embeddings.base import EmbeddingError, check_texts
from apps.providers.embeddings.token_embedder import (
    QueryEmbedding,
    TokenEmbedding,
    TokenStateError,
    kept_token,
    quantise,
    query_rows,
)
from apps.providers.guard import check_outside_transaction

if TYPE_CHECKING:  # imported when a runtime loads: both take a while
    from tokenizers import Tokenizer

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]", "[PAD]"})


@dataclass(frozen=True)
class _Runtime:
    tokenizer: "Tokenizer"
    session: Any  # Any: onnxruntime.InferenceSession (onnxruntime ships no types)


# One runtime per (model file, thread count) per process: the session holds ~90 MB and takes
# ~0.5 s to build, and both the session and the tokenizer are safe to share between threads.
_runtimes: dict[tuple[str, int, bool], _Runtime] = {}
_runtimes_lock = threading.Lock()


def _load_runtime(path: Path, threads: int, spin: bool) -> _Runtime:
    import onnxruntime
    from tokenizers import Tokenizer

    verify_sha256(path, MODEL_SHA256)
    verify_sha256(TOKENIZER_PATH, TOKENIZER_SHA256)
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    # No fixed length: pad each batch only to its longest text.
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - not a password

    options = onnxruntime.SessionOptions()
    # Pinned to the configured count: onnxruntime's own default spins a thread per core
    # (docs/providers.md "Threads"); one worker per machine takes every core, several
    # processes share them.
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Spinning keeps the pool's threads busy-waiting between and after operators: faster
    # on free cores, a core taken from the rest of the process on busy ones; SPIN
    # (docs/providers.md "Spinning").
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return _Runtime(tokenizer=tokenizer, session=session)


def _runtime(path: Path, threads: int, spin: bool) -> _Runtime:
    key = (str(path), threads, spin)
    runtime = _runtimes.get(key)
    if runtime is None:
        with _runtimes_lock:
            runtime = _runtimes.get(key)
            if runtime is None:
                try:
                    runtime = _load_runtime(path, threads, spin)
                except AssetError as exc:
                    raise EmbeddingError(f"MiniLM model files: {exc}") from exc
                except Exception as exc:  # onnxruntime and tokenizers raise their own types
                    raise EmbeddingError(f"could not load MiniLM from {path}: {exc}") from exc
                _runtimes[key] = runtime
    return runtime


@dataclass(frozen=True)
class _Projection:
    matrix: np.ndarray  # (384, token dims) float32
    mean: np.ndarray  # (384,) float32, subtracted first
    space: str  # the token space label


_projections: dict[tuple[str, int, int], _Projection] = {}


def _projection(path: Path) -> _Projection:
    """The shipped token projection, verified against its pinned sha256 once per file version."""
    try:
        verify_sha256(path, TOKEN_PROJECTION_SHA256)
        key = (str(path), path.stat().st_size, path.stat().st_mtime_ns)
    except (AssetError, OSError) as exc:
        raise TokenStateError(f"MiniLM token projection: {exc}") from exc
    projection = _projections.get(key)
    if projection is None:
        with np.load(path, allow_pickle=False) as data:
            matrix = data["matrix"].astype(np.float32)
            mean = data["mean"].astype(np.float32)
        space = f"{MODEL_NAME}/pca{matrix.shape[1]}-{TOKEN_PROJECTION_SHA256[:8]}@int8"
        projection = _Projection(matrix=matrix, mean=mean, space=space)
        _projections[key] = projection
    return projection


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, which container runtimes and
    taskset narrow), not every core of the machine."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def runtime_options(threads: int | str, batch_size: int | str) -> tuple[int, int]:
    """A MiniLM model's THREADS (0: every core available, `available_cores()`) and
    BATCH_SIZE as ints; ValueError naming a bad one."""
    if int(threads) < 0:
        raise ValueError(f"THREADS must be >= 0 (0: every available core), got {threads!r}")
    if int(threads) == 0:
        threads = available_cores()
    if int(batch_size) < 1:
        raise ValueError(f"BATCH_SIZE must be >= 1, got {batch_size!r}")
    return int(threads), int(batch_size)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) computed in this process; nothing is downloaded.

    The model loads on first use, once per process; `threads` pins onnxruntime's intra-op
    threads (0: every core the process may use) and `batch_size` bounds the texts run
    through the model at once.
    """

    name = MODEL_NAME
    dimensions = DIMENSIONS

    def __init__(
        self,
        *,
        threads: int = 0,
        batch_size: int = 32,
        spin: bool = True,
        model_path: str | None = None,
        token_projection_path: str | None = None,
    ) -> None:
        self.threads, self.batch_size = runtime_options(threads, batch_size)
        if not isinstance(spin, bool):  # bool("false") would be True
            raise ValueError(f"SPIN must be true or false, got {spin!r}")
        self.spin = spin
        # MODEL_PATH is for machines that cannot install the wheel; the pinned sha256 still
        # applies, so only the same file is accepted. The same holds for the projection.
        self._model_path = Path(model_path) if model_path else None
        self._projection_path = (
            Path(token_projection_path) if token_projection_path else TOKEN_PROJECTION_PATH
        )

    def __repr__(self) -> str:
        return (
            f"MiniLMEmbedder(threads={self.threads}, batch_size={self.batch_size}, "
            f"spin={self.spin})"
        )

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
        try:
            tokens = f"token states {self.token_space()}"
        except TokenStateError as exc:  # vectors still work; reranking falls back (docs)
            tokens = f"no token states: {exc}"
        return (
            f"{self.name} int8 ONNX, {self.dimensions}-d, sha256 ok, {self.threads} thread(s), "
            f"{tokens}"
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in input order; raises EmbeddingError."""
        return [e.vector.tolist() for e in self._run(texts, None)]

    def token_space(self) -> str:
        """The token space label; TokenStateError when the projection file is refused."""
        return _projection(self._projection_path).space

    def embed_with_tokens(self, texts: Sequence[str]) -> list[TokenEmbedding]:
        """Vectors and token codes from one model run; raises EmbeddingError (TokenStateError
        before running anything when the projection file is refused)."""
        return self._run(texts, _projection(self._projection_path))

    def embed_query_with_tokens(self, text: str) -> QueryEmbedding:
        """The query's vector and its content words' projected states, from one model run."""
        try:
            projection = _projection(self._projection_path)
        except TokenStateError as exc:
            [vector] = self.embed([text])
            return QueryEmbedding(vector=np.asarray(vector, np.float32), token_error=str(exc))
        check_outside_transaction(f"{self.name} embedding")
        runtime = _runtime(self.model_path, self.threads, self.spin)
        hidden, mask, tokens = self._forward(runtime, check_texts([text]))
        n = int(mask[0].sum())
        states = hidden[0, :n][query_rows(tokens[0][:n], SPECIAL_TOKENS)]
        return QueryEmbedding(
            vector=_pooled(hidden, mask)[0],
            tokens=_unit((_unit(states) - projection.mean) @ projection.matrix),
            token_space=projection.space,
        )

    def _run(self, texts: Sequence[str], projection: _Projection | None) -> list[TokenEmbedding]:
        check_outside_transaction(f"{self.name} embedding")
        texts = check_texts(texts)
        if not texts:
            return []
        runtime = _runtime(self.model_path, self.threads, self.spin)
        out: list = [None] * len(texts)
        # Longest first, so each batch holds texts of similar length and pads little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            hidden, mask, tokens = self._forward(runtime, [texts[i] for i in idx])
            vectors = _pooled(hidden, mask)
            for row, i in enumerate(idx):
                codes = _codes(hidden[row], tokens[row], projection) if projection else _NONE
                out[i] = TokenEmbedding(vector=vectors[row], codes=codes)
        return out

    def _forward(
        self, runtime: _Runtime, batch: list[str]
    ) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
        """Last-layer states (batch, tokens, 384), the attention mask and each text's tokens."""
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
        return hidden, mask, [e.tokens for e in encodings]


_NONE = np.zeros((0, 0), dtype=np.int8)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def _pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean pooling over the attention mask, unit length (sentence-transformers')."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    return _unit(summed / np.maximum(weights.sum(axis=1), 1e-9)).astype(np.float32)


def _codes(hidden: np.ndarray, tokens: list[str], projection: _Projection) -> np.ndarray:
    """The kept tokens' states: unit length, centred, projected, unit again, int8."""
    rows = [i for i, t in enumerate(tokens) if kept_token(t, SPECIAL_TOKENS)]
    if not rows:
        return np.zeros((0, projection.matrix.shape[1]), dtype=np.int8)
    states = _unit(hidden[rows]) - projection.mean
    return quantise(states @ projection.matrix)
