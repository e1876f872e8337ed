"""Latency of the reranker alone: one LoCoMo question against N of its conversation's turns.

No database and no server: for each question, its evidence turns plus random other turns of
the same conversation (seeded) up to --candidates, as "Speaker: text" (what the message
corpus embeds). Prints p50/p95/max of `score()` per query, after one warm-up call.

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
            out.append((qa["question"], [turns[i] for i in gold + rest]))
    rng.shuffle(out)
    return out[:questions]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--questions", type=int, default=200)
    p.add_argument("--candidates", type=int, default=50)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
    import django

    django.setup()
    from apps.providers.rerank.maxsim import MiniLMMaxSimReranker

    reranker = MiniLMMaxSimReranker(threads=args.threads, batch_size=args.batch_size)
    data = json.loads(Path(args.data).read_text())
    work = cases(data, args.candidates, args.questions, args.seed)
    reranker.score(work[0][0], work[0][1])  # loads the model
    times = []
    for query, texts in work:
        start = time.perf_counter()
        reranker.score(query, texts)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    load = os.getloadavg()[0]
    p95 = times[round(0.95 * (len(times) - 1))]
    print(
        f"reranker {reranker!r}: {len(times)} queries x {args.candidates} candidates, "
        f"p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, "
        f"max {times[-1]:.1f} ms (load average {load:.2f})"
    )


if __name__ == "__main__":
    main()
