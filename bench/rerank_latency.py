"""The reranking stage alone, from stored token states: one LoCoMo question against N of its
conversation's turns, and the size of the states.

No database and no server: every dev turn ("Speaker: text", what the message corpus embeds)
is embedded once with its token states by the configured MiniLM embedder, stored as the
pipeline stores them (int8 bytes); then, per question, the candidates are its evidence turns
plus random other turns of the conversation (seeded) up to --candidates. Timed per query:
decoding the candidates' bytes and the weighted MaxSim (apps.search.rerank.maxsim); the
query's own embedding (one model run, vector and token states together) is timed apart.

    .venv/bin/python bench/rerank_latency.py --questions 200 --candidates 50
"""

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared/bench/locomo/locomo-dev.json"


def turns_of(conv: dict) -> dict[str, str]:
    out = {}
    for key, turns in conv.items():
        if re.fullmatch(r"session_\d+", key) and isinstance(turns, list):
            for t in turns:
                text = t.get("text", "")
                if t.get("blip_caption"):
                    text = f"{text} [shares an image: {t['blip_caption']}]"
                out[t["dia_id"]] = f"{t['speaker']}: {text}"
    return out


def cases(data: list[dict], candidates: int, questions: int, seed: int):
    rng = random.Random(seed)
    out = []
    for sample in data:
        turns = turns_of(sample["conversation"])
        ids = sorted(turns)
        for qa in sample["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            gold = [g for g in qa.get("evidence", []) if g in turns][:candidates]
            rest = rng.sample([i for i in ids if i not in gold], candidates - len(gold))
            out.append((qa["question"], [(sample["sample_id"], i) for i in gold + rest]))
    rng.shuffle(out)
    return out[:questions]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[round(q * (len(values) - 1))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--questions", type=int, default=200)
    p.add_argument("--candidates", type=int, default=50)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
    import django

    django.setup()
    from apps.providers.embeddings import get_embedder
    from apps.providers.embeddings.token_embedder import unit_rows
    from apps.search.rerank import maxsim

    embedder = get_embedder()
    data = json.loads(Path(args.data).read_text())
    texts = {(s["sample_id"], d): t for s in data for d, t in turns_of(s["conversation"]).items()}
    keys = list(texts)
    t0 = time.perf_counter()
    found = embedder.embed_with_tokens([texts[k] for k in keys])
    seconds = time.perf_counter() - t0
    stored = {k: (len(e.codes), e.codes.tobytes()) for k, e in zip(keys, found, strict=True)}
    sizes = [len(b) for _n, b in stored.values()]
    counts = [n for n, _b in stored.values()]
    print(
        f"{embedder.token_space()}: {len(keys)} turns embedded with their states in "
        f"{seconds:.1f} s; tokens kept per turn mean {statistics.fmean(counts):.1f}, "
        f"max {max(counts)}; codes bytes per turn mean {statistics.fmean(sizes):.0f}, "
        f"p95 {pct(sizes, 0.95)}, max {max(sizes)}"
    )

    work = cases(data, args.candidates, args.questions, args.seed)
    embed_ms, rerank_ms = [], []
    for n, (query, cands) in enumerate(work):
        t0 = time.perf_counter()
        q = embedder.embed_query_with_tokens(query)
        t1 = time.perf_counter()
        docs = [
            unit_rows(np.frombuffer(stored[c][1], np.int8).reshape(stored[c][0], -1)) for c in cands
        ]
        maxsim(q.tokens, docs)
        t2 = time.perf_counter()
        if n:  # the first call loads nothing here, but warms numpy's paths
            embed_ms.append((t1 - t0) * 1000)
            rerank_ms.append((t2 - t1) * 1000)
    load = os.getloadavg()[0]
    print(
        f"{len(rerank_ms)} queries x {args.candidates} candidates: decode + MaxSim p50 "
        f"{statistics.median(rerank_ms):.2f} ms, p95 {pct(rerank_ms, 0.95):.2f} ms; the query's "
        f"embedding (vector + token states, one run) p50 {statistics.median(embed_ms):.1f} ms, "
        f"p95 {pct(embed_ms, 0.95):.1f} ms (load average {load:.2f})"
    )


if __name__ == "__main__":
    main()
