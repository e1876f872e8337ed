"""Search latency at scale: loads N synthetic messages for one agent, times every mode.

Texts are real LoCoMo turns re-spoken by 200 speakers with extra words drawn from the
corpus vocabulary; vectors are the MiniLM vectors of the source turns plus Gaussian noise
(cosine ~0.9 to the source), so neighbourhoods look like real ones. Queries are LoCoMo
questions embedded at query time: latencies include the query embedding, the search and
the context windows (memoryhub's search selector, in-process; HTTP adds ~2 ms).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mh_bench_scale \\
        .venv/bin/python bench/search_scale.py --messages 100000 --queries 300
"""

import argparse
import json
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")

import django

django.setup()

from django.db import connection, transaction  # noqa: E402

from apps.agents.models import Agent, Team  # noqa: E402
from apps.conversations.models import Message, Session  # noqa: E402
from apps.conversations.search import message_search  # noqa: E402
from apps.core.services import database_optimize  # noqa: E402
from apps.providers.embeddings import get_embedder, vector_label  # noqa: E402
from apps.search.backends.base import hnsw_index  # noqa: E402

DATA = Path(__file__).resolve().parent.parent.parent / "shared/bench/locomo/locomo-dev.json"
NAMES = [f"{a}{b}" for a in ("Al", "Be", "Ca", "Da", "El", "Fa", "Go", "Ha", "Iv", "Jo")
         for b in ("ex", "la", "rin", "mon", "sy", "ton", "vi", "dra", "ko", "nie",
                   "bert", "na", "ric", "ssa", "to", "ly", "da", "mir", "za", "us")]  # fmt: skip


def load_turns() -> list[str]:
    turns = []
    for sample in json.loads(DATA.read_text()):
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                turns.extend(t["text"] for t in value)
    questions = [
        qa["question"] for s in json.loads(DATA.read_text()) for qa in s["qa"]
        if qa.get("category") in (1, 2, 3, 4)
    ]  # fmt: skip
    return turns, questions


def load(agent: Agent, n: int, session_size: int, seed: int) -> None:
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    turns, _ = load_turns()
    embedder = get_embedder()
    print(f"embedding {len(turns)} source turns...", flush=True)
    t0 = time.perf_counter()
    base = np.asarray(embedder.embed(turns), dtype=np.float32)
    print(f"  {time.perf_counter() - t0:.1f}s", flush=True)
    vocab = sorted({w for t in turns for w in t.split() if w.isalpha() and len(w) > 3})
    label = vector_label(embedder)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    vendor = connection.vendor
    if vendor == "postgresql":
        with connection.cursor() as c:  # bulk loads are ~9x faster with HNSW built after
            c.execute(f"DROP INDEX IF EXISTS {hnsw_index('conversations_message', 'embedding')}")
    t0 = time.perf_counter()
    batch: list[Message] = []
    session = None
    for i in range(n):
        if i % session_size == 0:
            session = Session.objects.create(
                agent=agent, key=f"s{i // session_size}", created_at=start
            )
        j = rng.randrange(len(turns))
        extra = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 6)))
        vec = base[j] + nrng.normal(0, 0.025, 384).astype(np.float32)
        vec /= np.linalg.norm(vec)
        text = f"{turns[j]} {extra}".strip()
        batch.append(
            Message(
                id=uuid.uuid4(), agent=agent, session=session, role="user",
                name=rng.choice(NAMES), content=text, byte_size=len(text.encode()),
                created_at=start + timedelta(minutes=i), embedding=vec, embedding_model=label,
            )
        )  # fmt: skip
        if len(batch) == 5000:
            with transaction.atomic():
                Message.objects.bulk_create(batch)
            batch = []
            print(f"  {i + 1} messages, {time.perf_counter() - t0:.0f}s", flush=True)
    if batch:
        with transaction.atomic():
            Message.objects.bulk_create(batch)
    print(f"loaded {n} in {time.perf_counter() - t0:.1f}s", flush=True)
    if vendor == "postgresql":
        t0 = time.perf_counter()
        with connection.cursor() as c:
            c.execute("SET maintenance_work_mem = '512MB'")
            c.execute(
                f"CREATE INDEX {hnsw_index('conversations_message', 'embedding')} ON "
                "conversations_message USING hnsw (embedding vector_cosine_ops)"
            )
            c.execute("ANALYZE")
        print(f"HNSW built in {time.perf_counter() - t0:.1f}s", flush=True)
    database_optimize()  # SQLite's planner statistics, as the hourly beat task keeps them


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--messages", type=int, default=100_000)
    p.add_argument("--session-size", type=int, default=200)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--modes", default="hybrid,semantic,keyword_bm25,contains")
    p.add_argument("--agent", default="scale-bench")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()

    team, _ = Team.objects.get_or_create(name="bench")
    agent, _ = Agent.objects.get_or_create(slug=args.agent, defaults={"team": team})
    have = Message.objects.filter(agent=agent).count()
    if have < args.messages:
        if have:
            raise SystemExit(f"agent {args.agent} has {have} messages; use a new --agent")
        load(agent, args.messages, args.session_size, args.seed)
    else:
        print(f"agent {args.agent} already has {have} messages")
    _, questions = load_turns()
    rng = random.Random(args.seed)
    queries = rng.sample(questions, min(args.queries, len(questions)))
    get_embedder().embed(["warm up"])
    print(f"\n{connection.vendor}, {have or args.messages} messages, {len(queries)} queries, k=10")
    for mode in args.modes.split(","):
        api_mode = "keyword" if mode == "keyword_bm25" else mode
        if mode == "keyword_bm25":
            # Make the whole history archive so keyword mode exercises BM25 on all of it.
            from apps.conversations.models import SessionMeta

            for s in Session.objects.filter(agent=agent).exclude(meta__start_at__isnull=False):
                SessionMeta.objects.update_or_create(
                    session=s, defaults={"start_at": datetime(2100, 1, 1, tzinfo=UTC)}
                )
        for q in queries[:5]:
            message_search(agent=agent, query=q, mode=api_mode, k=10)
        times, found = [], []
        for q in queries:
            t0 = time.perf_counter()
            result = message_search(agent=agent, query=q, mode=api_mode, k=10)
            times.append((time.perf_counter() - t0) * 1000)
            found.append(len(result.hits))
        print(
            f"{mode:13s} p50 {pct(times, 0.5):7.1f} ms  p95 {pct(times, 0.95):7.1f} ms  "
            f"mean hits {statistics.fmean(found):.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
