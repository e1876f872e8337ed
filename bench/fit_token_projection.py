"""Fit the MiniLM token projection once, on the LoCoMo dev conversations, and write the file
the embedder ships (apps/providers/embeddings/data/minilm_token_projection.npz).

Every dev turn is run through the pinned int8 model as the messages corpus embeds it
("Speaker: text"); the kept tokens' last-layer states (no [CLS]/[SEP], punctuation or
stopwords: the embedder's own rule, `kept_token`), each scaled to unit length, are centred on
their mean and their top --dims principal directions kept (SVD). The script prints the
file's sha256: pin it as TOKEN_PROJECTION_SHA256 in apps/providers/embeddings/assets.py.
Changing the file changes the token space label, so stored states are backfilled by the
embed sweep.

    .venv/bin/python bench/fit_token_projection.py --dims 64
"""

import argparse
import hashlib
import io
import json
import os
import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")

import django  # noqa: E402

django.setup()

from locomo import DATA, sessions_of, turn_text  # noqa: E402
from rank_collect import forward  # noqa: E402

from apps.providers.embeddings.assets import TOKEN_PROJECTION_PATH, model_path  # noqa: E402
from apps.providers.embeddings.minilm import SPECIAL_TOKENS, _runtime  # noqa: E402
from apps.providers.embeddings.token_embedder import kept_token  # noqa: E402


def kept_states(texts: list[str], batch: int = 16) -> np.ndarray:
    """The kept tokens' unit-length states of every text, stacked (tokens x 384)."""
    runtime = _runtime(model_path(), 1)
    out = []
    for start in range(0, len(texts), batch):
        hidden, tokens, _mask = forward(runtime, texts[start : start + batch])
        for row, text_tokens in enumerate(tokens):
            rows = [i for i, t in enumerate(text_tokens) if kept_token(t, SPECIAL_TOKENS)]
            x = hidden[row, rows].astype(np.float64)
            out.append(x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12))
    return np.concatenate(out)


def npz_bytes(matrix: np.ndarray, mean: np.ndarray) -> bytes:
    """A byte-for-byte reproducible .npz (fixed member dates) of the two arrays."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, array in (("matrix", matrix), ("mean", mean)):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(2026, 1, 1, 0, 0, 0))
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--dims", type=int, default=64)
    p.add_argument("--out", type=Path, default=TOKEN_PROJECTION_PATH)
    args = p.parse_args()
    samples = json.loads(args.data.read_text())
    texts = [
        f"{t['speaker']}: {turn_text(t)}"
        for s in samples
        for _n, _d, turns in sessions_of(s["conversation"])
        for t in turns
    ]
    x = kept_states(texts)
    mean = x.mean(axis=0)
    _, singular, vt = np.linalg.svd(x - mean, full_matrices=False)
    kept = (singular[: args.dims] ** 2).sum() / (singular**2).sum()
    matrix = vt[: args.dims].T.astype(np.float32)
    data = npz_bytes(matrix, mean.astype(np.float32))
    args.out.write_bytes(data)
    print(
        f"{len(texts)} turns, {len(x)} kept tokens, {args.dims} dims keep {kept:.1%} of the "
        f"variance; wrote {args.out} ({len(data):,} bytes)\n"
        f"sha256 {hashlib.sha256(data).hexdigest()}"
    )


if __name__ == "__main__":
    main()
