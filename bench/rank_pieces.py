"""The pieces bench/rank_offline.py ranks with: token selection and compression, the legs'
fusion, smoothing, MaxSim and its windows, the metrics and leave-one-conversation-out, in
numpy, with the same formulas as apps/search (apps/search/rerank.py, hybrid.py)."""

import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apps.providers.stopwords import STOPWORDS  # noqa: E402

DEPTH = 50
RRF_K = 10
NEIGHBOUR = 0.2
DECAY = 5.0
SPECIAL = frozenset({"[CLS]", "[SEP]", "[PAD]"})
WORDLIKE = re.compile(r"[^\W_]")


# --- token selection and compression --------------------------------------------------------


def keep_rows(tokens: list[str], drop: str) -> list[int]:
    """Document token rows kept: 'special' drops [CLS]/[SEP]; 'punct' also tokens without a
    letter or digit; 'stop' also whole-word stopwords."""
    out = []
    for i, t in enumerate(tokens):
        if t in SPECIAL:
            continue
        if drop in ("punct", "stop") and not WORDLIKE.search(t):
            continue
        if drop == "stop" and t in STOPWORDS:
            continue
        out.append(i)
    return out


def query_rows(tokens: list[str]) -> list[int]:
    """As the reranker picks them: content words, else every word."""
    words = [i for i, t in enumerate(tokens) if t not in SPECIAL and WORDLIKE.search(t)]
    content = [i for i in words if tokens[i] not in STOPWORDS]
    return content or words


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


@dataclass(frozen=True)
class Space:
    """How token states are stored: a projection (None: all 384 dims), centring, int bits."""

    dims: int = 0  # 0: no projection
    center: bool = False
    bits: int = 0  # 0: float32; 8: int8 per-token (absmax); 4: int4
    drop: str = "punct"
    unit_first: bool = True  # normalise the raw states before projecting

    def label(self) -> str:
        d = f"pca{self.dims}{'c' if self.center else ''}" if self.dims else "full"
        q = f"int{self.bits}" if self.bits else "f32"
        return f"{d}/{q}/{self.drop}{'' if self.unit_first else '/raw'}"


def fit_projection(convs: list[dict], space: Space, skip: str | None = None):
    """Top principal directions of the kept document token states (of every conversation but
    `skip`); (matrix 384 x dims, mean)."""
    rows = []
    for c in convs:
        if c["id"] == skip:
            continue
        for s, toks in zip(c["states"], c["tokens"], strict=True):
            x = s[keep_rows(toks, space.drop)].astype(np.float32)
            rows.append(unit(x) if space.unit_first else x)
    x = np.concatenate(rows)
    mean = x.mean(axis=0) if space.center else np.zeros(x.shape[1], dtype=np.float32)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    return vt[: space.dims].T.astype(np.float32), mean.astype(np.float32)


def quantise(x: np.ndarray, bits: int) -> np.ndarray:
    """Per-token symmetric quantisation, returned dequantised (cosine ignores the scale)."""
    if not bits:
        return x
    top = (1 << (bits - 1)) - 1
    scale = np.maximum(np.abs(x).max(axis=1, keepdims=True), 1e-12) / top
    return np.round(x / scale).astype(np.float32)


def encode(x: np.ndarray, space: Space, proj, bits: int | None = None) -> np.ndarray:
    """Stored form of token states (queries are not stored: bits=0 keeps them float)."""
    x = x.astype(np.float32)
    if space.unit_first:
        x = unit(x)
    if space.dims:
        p, mean = proj
        x = (x - mean) @ p
    return unit(quantise(unit(x), space.bits if bits is None else bits))


# --- the cache, prepared per space ----------------------------------------------------------


def prepare(convs: list[dict], space: Space, proj_for) -> None:
    """Per conversation: each turn's encoded kept states; per question its content rows."""
    for c in convs:
        proj = proj_for(c["id"])
        docs = []
        for s, toks in zip(c["states"], c["tokens"], strict=True):
            rows = keep_rows(toks, space.drop)
            docs.append(encode(s[rows], space, proj) if rows else np.zeros((0, 1), np.float32))
        c["docs"] = docs
        for q in c["questions"]:
            rows = query_rows(q["tokens"])
            q["qs"] = encode(q["states"][rows], space, proj, bits=0)


def window_docs(c: dict, gamma: float, sides: tuple[int, ...] = (-1, 1)) -> list[np.ndarray]:
    """Each turn's token rows with its session neighbours' (-1: the turn before, 1: after),
    the neighbours' rows scaled by gamma: MaxSim then matches a query word in the exchange,
    at a discount when the match is in the neighbour."""
    out = []
    for i in range(len(c["docs"])):
        parts = [c["docs"][i]]
        for side in sides:
            j = c["prev"][i] if side < 0 else c["next"][i]
            if j >= 0 and len(c["docs"][j]):
                parts.append(c["docs"][j] * gamma)
        parts = [p for p in parts if len(p)]
        out.append(np.concatenate(parts) if parts else c["docs"][i])
    return out


def base(convs: list[dict]) -> None:
    """Index maps, neighbours, the two legs 50 deep: done once."""
    for c in convs:
        index = {d: i for i, d in enumerate(c["dia"])}
        n = len(c["dia"])
        sess = c["session"]
        c["prev"] = [i - 1 if i > 0 and sess[i - 1] == sess[i] else -1 for i in range(n)]
        c["next"] = [i + 1 if i + 1 < n and sess[i + 1] == sess[i] else -1 for i in range(n)]
        for q in c["questions"]:
            q["gold_i"] = {index[g] for g in q["gold"] if g in index}
            q["gold_s"] = {g.split(":")[0] for g in q["gold"]}
            q["b"] = [(index[d], s) for d, s in q["bm25"][:DEPTH]]
            cos = c["vectors"] @ q["vector"]
            top = np.argsort(-cos, kind="stable")[:DEPTH]
            q["v"] = [(int(i), float(cos[i])) for i in top]
            q["cos"] = cos


# --- ranking pieces, as apps/search does them ------------------------------------------------


def rrf(legs: list[list[tuple[int, float]]], k: int = RRF_K) -> tuple[list[int], dict]:
    scores: dict[int, float] = {}
    for leg in legs:
        for rank, (i, _s) in enumerate(leg, start=1):
            scores[i] = scores.get(i, 0.0) + 1.0 / (k + rank)
    order = sorted(scores, key=lambda i: -scores[i])
    return order, scores


def smooth(c: dict, order: list[int], scores: dict, w: float) -> tuple[list[int], dict]:
    if w <= 0:
        return order, scores
    rank = {i: r for r, i in enumerate(order)}
    out = dict(scores)
    for i in order:
        for j in (c["prev"][i], c["next"][i]):
            if j >= 0:
                out[j] = out.get(j, 0.0) + w * scores[i]
    new = sorted(out, key=lambda i: (-out[i], rank.get(i, len(rank))))
    return new, out


def best_matches(qs: np.ndarray, docs: list[np.ndarray], ids: list[int]) -> np.ndarray:
    best = np.full((len(ids), len(qs)), -1.0, dtype=np.float32)
    for row, i in enumerate(ids):
        d = docs[i]
        if len(d):
            best[row] = (qs @ d.T).max(axis=1)
    return best


def maxsim(qs: np.ndarray, docs: list[np.ndarray], ids: list[int], decay: float = DECAY):
    """Weighted MaxSim of each candidate (weights from these candidates' mean best match)."""
    if not ids or not len(qs):
        return np.zeros(len(ids))
    best = best_matches(qs, docs, ids)
    if decay:
        logits = -decay * best.mean(axis=0)
        w = np.exp(logits - logits.max())
        w /= w.sum()
    else:
        w = np.full(best.shape[1], 1.0 / best.shape[1])
    return best @ w


def z(x: np.ndarray) -> np.ndarray:
    s = x.std()
    return (x - x.mean()) / s if s > 0 else np.zeros_like(x)


def minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def blend_rerank(c, q, order, scores, depth, weight, nb=0.0):
    """Today's stage: z(fused) + weight x z(MaxSim) over the top `depth`; the rest below."""
    head, tail = order[:depth], order[depth:]
    if len(head) < 2:
        return order
    m = maxsim(q["qs"], c["docs"], head)
    blend = z(np.array([scores[i] for i in head])) + weight * z(m)
    if nb:
        blend = blend + nb * z(neighbour_best(c, q, head))
    idx = np.argsort(-blend, kind="stable")
    return [head[i] for i in idx] + tail


def neighbour_best(c, q, ids):
    """Each candidate's best MaxSim among its session neighbours (weights of the candidates)."""
    out = []
    m_all = {}
    nbrs = [j for i in ids for j in (c["prev"][i], c["next"][i]) if j >= 0]
    need = sorted(set(nbrs))
    vals = maxsim(q["qs"], c["docs"], need) if need else []
    m_all = dict(zip(need, vals, strict=True))
    for i in ids:
        vs = [m_all[j] for j in (c["prev"][i], c["next"][i]) if j >= 0]
        out.append(max(vs) if vs else 0.0)
    return np.array(out)


def score_fusion(c, q, w, norm="minmax", dense="maxsim", smooth_w=NEIGHBOUR, nb=0.0):
    """w x N(BM25) + (1 - w) x N(dense) over the union of the two legs; then smoothing."""
    legs = [q["b"], q["v"]]
    order, _rrf_scores = rrf(legs)
    ids = order
    b = dict(q["b"])
    bm = np.array([b.get(i, 0.0) for i in ids])
    if dense == "maxsim":
        d = maxsim(q["qs"], c["docs"], ids)
    elif dense == "cos":
        d = q["cos"][ids]
    else:  # both, equally
        n = minmax if norm == "minmax" else z
        d = n(maxsim(q["qs"], c["docs"], ids)) + n(q["cos"][ids])
    n = minmax if norm == "minmax" else z
    s = w * n(bm) + (1 - w) * n(d)
    if nb:
        s = s + nb * n(neighbour_best(c, q, ids))
    if norm == "z":
        s = s - s.min()  # smoothing passes a share of the score: keep scores non-negative
    scores = {i: float(v) for i, v in zip(ids, s, strict=True)}
    fused = sorted(ids, key=lambda i: -scores[i])
    return smooth(c, fused, scores, smooth_w)[0]


# --- metrics and leave-one-conversation-out -------------------------------------------------


def metrics(c, q, ranked: list[int]) -> dict:
    gold = q["gold_i"]
    n = max(len(set(q["gold"])), 1)
    out = {f"R@{k}": len(gold & set(ranked[:k])) / n for k in (5, 10, 20)}
    sess = {c["dia"][i].split(":")[0] for i in ranked[:10]}
    out["S@10"] = len(q["gold_s"] & sess) / len(q["gold_s"])
    out["MRR"] = next((1 / (r + 1) for r, i in enumerate(ranked) if i in gold), 0.0)
    return out


def run(convs, ranker) -> dict[str, list[dict]]:
    """{conversation: [metrics per question]} for ranker(c, q) -> ranked ids."""
    return {
        c["id"]: [(q["cat"], metrics(c, q, ranker(c, q))) for q in c["questions"]] for c in convs
    }


def pooled(per_conv: dict, convs_ids=None, key="R@10", cat=None) -> float:
    vals = [
        m[key]
        for cid, rows in per_conv.items()
        if convs_ids is None or cid in convs_ids
        for ct, m in rows
        if cat is None or ct == cat
    ]
    return statistics.fmean(vals) if vals else float("nan")


def summary(per_conv: dict) -> str:
    parts = [f"{k}={pooled(per_conv, key=k):.3f}" for k in ("R@5", "R@10", "R@20", "S@10", "MRR")]
    cats = " ".join(f"c{c}={pooled(per_conv, cat=c):.3f}" for c in (1, 2, 3, 4))
    return " ".join(parts) + "  | R@10 " + cats


def loco(convs, grid: list, ranker_for) -> tuple[dict, dict]:
    """Leave-one-conversation-out: each held-out conversation ranked with the grid value that
    is best (R@10) on the other four. Returns (held-out results, chosen value per fold)."""
    results = {v: run(convs, ranker_for(v)) for v in grid}
    ids = [c["id"] for c in convs]
    held, chosen = {}, {}
    for cid in ids:
        others = [x for x in ids if x != cid]
        best = max(grid, key=lambda v: pooled(results[v], others))
        chosen[cid] = best
        held[cid] = results[best][cid]
    return held, chosen, results


# --- the variants compared in docs/search.md -------------------------------------------------


def mean_tokens(convs) -> float:
    return statistics.fmean(len(d) for c in convs for d in c["docs"])


def use(convs, space, loco_fit=False):
    if space.dims:
        if loco_fit:
            projs = {c["id"]: fit_projection(convs, space, skip=c["id"]) for c in convs}
            prepare(convs, space, lambda cid: projs[cid])
        else:
            proj = fit_projection(convs, space)
            prepare(convs, space, lambda cid: proj)
    else:
        prepare(convs, space, lambda cid: None)


def blend_window(gamma: float, weight: float, depth: int):
    """The shipped stage: RRF + smoothing, then the top `depth` re-ordered by
    z(fused) + weight x z(MaxSim over each candidate's window, neighbours' rows x gamma)."""

    def ranker(c, q):
        key = f"window{gamma}"
        if key not in c:
            c[key] = window_docs(c, gamma)
        order, scores = smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR)
        head, tail = order[:depth], order[depth:]
        m = maxsim(q["qs"], c[key], head)
        b = z(np.array([scores[i] for i in head])) + weight * z(m)
        return [head[i] for i in np.argsort(-b, kind="stable")] + tail

    return ranker


def fusion_window(gamma: float, weight: float, smooth_w: float = NEIGHBOUR, dense_cos=False):
    """Score fusion: weight x minmax(BM25) + (1 - weight) x minmax(window MaxSim) over the
    union of the legs, then smoothing."""

    def ranker(c, q):
        key = f"window{gamma}"
        if key not in c:
            c[key] = window_docs(c, gamma)
        order, _ = rrf([q["b"], q["v"]])
        b = dict(q["b"])
        bm = minmax(np.array([b.get(i, 0.0) for i in order]))
        dense = minmax(maxsim(q["qs"], c[key], order))
        if dense_cos:
            dense = minmax(dense + minmax(q["cos"][order]))
        s = weight * bm + (1 - weight) * dense
        scores = {i: float(v) for i, v in zip(order, s, strict=True)}
        return smooth(c, sorted(order, key=lambda i: -scores[i]), scores, smooth_w)[0]

    return ranker


def rrf3_window(gamma: float):
    def ranker(c, q):
        key = f"window{gamma}"
        if key not in c:
            c[key] = window_docs(c, gamma)
        order, _ = smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR)
        m = maxsim(q["qs"], c[key], order)
        leg = [(order[i], float(m[i])) for i in np.argsort(-m, kind="stable")][:DEPTH]
        return smooth(c, *rrf([q["b"], q["v"], leg]), NEIGHBOUR)[0]

    return ranker


def blend_rerank_f(weight: float, depth: int):
    return lambda c, q: blend_rerank(
        c, q, *smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR), depth, weight
    )
