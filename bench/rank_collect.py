"""Offline ranking experiments, step 1: cache what the ranking works from, once.

Loads the LoCoMo dev conversations into the configured database (one agent per conversation,
one memoryhub session per LoCoMo session, turns 1 s apart, bulk-inserted without vectors), and
caches, per question of categories 1-4: the real BM25 leg of that database (100 deep, the
production code path), and MiniLM's last-layer token states of every turn (as the messages
corpus embeds it, "Speaker: text") and of every question, from the pinned int8 model. The
vector leg, MaxSim and every fusion are then computed from the cache by bench/rank_offline.py,
so a variant costs seconds, not an API run.

    createdb -h 127.0.0.1 -U postgres memoryhub_rank_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/memoryhub_rank_bench \\
    MEMORYHUB_DATA_DIR=/tmp/mh-rank-bench \\
        .venv/bin/python bench/rank_collect.py --out var/rank/pg.pkl
"""

import argparse
import os
import pickle
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from locomo import DATA, evidence_ids, sessions_of, turn_text  # noqa: E402

from apps.agents.models import Agent, Team  # noqa: E402
from apps.conversations.models import Message, Session  # noqa: E402
from apps.providers.embeddings.assets import model_path  # noqa: E402
from apps.providers.embeddings.minilm import MiniLMEmbedder, _runtime  # noqa: E402
from apps.search.legs import keyword_search  # noqa: E402

DEPTH = 100


def load(sample: dict, prefix: str) -> tuple[Agent, dict]:
    """The conversation as one agent (reused when already loaded); {message id: dia_id}."""
    team, _ = Team.objects.get_or_create(name="bench")
    agent, created = Agent.objects.get_or_create(
        slug=f"{prefix}-{sample['sample_id']}", defaults={"team": team}
    )
    if not created and Message.objects.filter(agent=agent).exists():
        rows = Message.objects.filter(agent=agent).values_list("id", "metadata")
        return agent, {pk: meta["dia_id"] for pk, meta in rows}
    batch = []
    with transaction.atomic():
        for number, start, turns in sessions_of(sample["conversation"]):
            session = Session.objects.create(agent=agent, key=f"s{number}", created_at=start)
            for i, t in enumerate(turns):
                text = turn_text(t)
                batch.append(
                    Message(
                        id=uuid.uuid4(),
                        agent=agent,
                        session=session,
                        role="user",
                        name=t["speaker"],
                        content=text,
                        byte_size=len(text.encode()),
                        created_at=start + timedelta(seconds=i),
                        metadata={"dia_id": t["dia_id"]},
                    )
                )
        Message.objects.bulk_create(batch)
    return agent, {m.id: m.metadata["dia_id"] for m in batch}


def forward(runtime, texts: list[str]):
    """MiniLM's last-layer states of a batch, as the embedder computes them:
    (hidden, each text's tokens, attention mask)."""
    hidden, mask, tokens = MiniLMEmbedder()._forward(runtime, texts)
    return hidden, tokens, mask


def states(runtime, texts: list[str], batch: int = 16) -> list[tuple]:
    """Each text's raw last-layer states (tokens x 384, float16), its tokens, and its
    embedding (mean pooling over the tokens, unit length, from the float32 states)."""
    out: list = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    for start in range(0, len(order), batch):
        idx = order[start : start + batch]
        hidden, tokens, mask = forward(runtime, [texts[i] for i in idx])
        for row, i in enumerate(idx):
            n = int(mask[row].sum())
            pooled = hidden[row, :n].mean(axis=0)
            pooled /= max(float(np.linalg.norm(pooled)), 1e-12)
            out[i] = (hidden[row, :n].astype(np.float16), list(tokens[row][:n]), pooled)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--prefix", default="rank")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    if not os.environ.get("MEMORYHUB_DATA_DIR"):
        p.error("set MEMORYHUB_DATA_DIR to a folder of its own")
    call_command("migrate", interactive=False, verbosity=0)
    samples = __import__("json").loads(args.data.read_text())
    runtime = _runtime(model_path(), 1)
    convs = []
    for sample in samples:
        t0 = time.perf_counter()
        agent, dia_of = load(sample, args.prefix)
        if connection.vendor == "postgresql":
            with connection.cursor() as c:
                c.execute("ANALYZE")
        turns = [
            (t["dia_id"], number, f"{t['speaker']}: {turn_text(t)}")
            for number, _start, ts in sessions_of(sample["conversation"])
            for t in ts
        ]
        questions = []
        for qa in sample["qa"]:
            gold = evidence_ids(qa)
            if qa.get("category") not in (1, 2, 3, 4) or not gold:
                continue
            hits = keyword_search("messages", agent_id=agent.id, query=qa["question"], limit=DEPTH)
            bm25 = [(dia_of[h.object_id], h.score) for h in hits]
            questions.append(
                {"q": qa["question"], "cat": qa["category"], "gold": gold, "bm25": bm25}
            )
        turn_states = states(runtime, [t[2] for t in turns])
        q_states = states(runtime, [q["q"] for q in questions])
        for q, s in zip(questions, q_states, strict=True):
            q["states"], q["tokens"], q["vector"] = s
        convs.append(
            {
                "id": sample["sample_id"],
                "dia": [t[0] for t in turns],
                "session": [t[1] for t in turns],
                "text": [t[2] for t in turns],
                "states": [s[0] for s in turn_states],
                "tokens": [s[1] for s in turn_states],
                "vectors": np.stack([s[2] for s in turn_states]),
                "questions": questions,
            }
        )
        print(
            f"{sample['sample_id']}: {len(turns)} turns, {len(questions)} questions, "
            f"{time.perf_counter() - t0:.1f}s",
            flush=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("wb") as fh:
        pickle.dump({"backend": connection.vendor, "convs": convs}, fh)
    print(f"cached into {args.out}")


if __name__ == "__main__":
    main()
