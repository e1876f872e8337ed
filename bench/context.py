"""get_context latency with 100k messages and 10k facts in one agent.

    DATABASE_URL=... CACHE_URL=... .venv/bin/python bench/context.py [--messages N] [--facts N]

Uses the test settings (deterministic HashEmbedder for the query, random unit vectors for
stored rows) on whatever DATABASE_URL names; the database is migrated and the agent
"bench-context" is recreated. On PostgreSQL the messages HNSW index is dropped during the
load and rebuilt after it (bulk-load advice in docs/benchmarks.md).
"""

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.test")

import django

django.setup()

import numpy as np  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from apps.agents.models import Agent  # noqa: E402
from apps.agents.services import agent_create  # noqa: E402
from apps.conversations.models import Message, Session  # noqa: E402
from apps.entries.services import entry_add  # noqa: E402
from apps.facts.models import Category, Fact  # noqa: E402
from apps.memory.context import get_context  # noqa: E402
from apps.providers.embeddings import get_embedder  # noqa: E402
from apps.search.backends.base import hnsw_index  # noqa: E402
from apps.search.corpora import vector_label  # noqa: E402

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey yankee zulu "
         "coffee meeting tokyo berlin travel deploy review budget cat garden").split()  # fmt: skip


def vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def text(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def load(args) -> tuple[Agent, list[Session]]:
    Agent.objects.filter(slug="bench-context").delete()
    agent = agent_create(slug="bench-context")
    rng, rnd = np.random.default_rng(1), random.Random(1)
    label = vector_label(get_embedder())
    sessions = Session.objects.bulk_create(
        [Session(agent=agent, key=f"s{i}") for i in range(args.sessions)]
    )
    pg = connection.vendor == "postgresql"
    index = hnsw_index(Message._meta.db_table, "embedding")
    if pg:
        with connection.cursor() as c:
            c.execute(f"DROP INDEX IF EXISTS {index}")
    start = timezone.now() - timedelta(days=30)
    t0 = time.perf_counter()
    per = args.messages // args.sessions
    for s_i, session in enumerate(sessions):
        vecs = vectors(rng, per)
        rows = [
            Message(
                agent=agent, session=session, role="user" if i % 2 == 0 else "assistant",
                content=text(rnd, 12), created_at=start + timedelta(seconds=s_i * per + i),
                importance=0.9 if rnd.random() < 0.02 else 0.5, token_count=12, byte_size=60,
                embedding=vecs[i], embedding_model=label,
            )
            for i in range(per)
        ]  # fmt: skip
        Message.objects.bulk_create(rows, batch_size=1000)
    if pg:
        with connection.cursor() as c:
            c.execute(
                f"CREATE INDEX {index} ON {Message._meta.db_table} "
                "USING hnsw (embedding vector_cosine_ops)"
            )
    print(f"loaded {args.messages} messages in {time.perf_counter() - t0:.1f}s")
    t0 = time.perf_counter()
    cats = Category.objects.bulk_create(
        [Category(agent=agent, name=f"cat-{i}", embedding=v) for i, v in
         enumerate(vectors(rng, 20))]
    )  # fmt: skip
    fvecs = vectors(rng, args.facts)
    now = timezone.now()
    Fact.objects.bulk_create(
        [
            Fact(
                agent=agent, category=cats[i % 20], key=f"fact-{i}", value=text(rnd, 10),
                normalized=uuid.uuid4().hex, importance=rnd.random(), salience=rnd.random(),
                embedding=fvecs[i], embedding_model=label, created_at=now, updated_at=now,
            )
            for i in range(args.facts)
        ],
        batch_size=1000,
    )  # fmt: skip
    print(f"loaded {args.facts} facts in {time.perf_counter() - t0:.1f}s")
    for name in ["SOUL.md", "AGENTS.md", "USER.md"]:
        entry_add(agent=agent, name=name, content=text(rnd, 150))
    entry_add(agent=agent, name="MEMORY.md", content=text(rnd, 1300))
    return agent, sessions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    agent, sessions = load(args)
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("ANALYZE")
    rnd = random.Random(2)
    for session in sessions[:5]:  # warm-up: connections, tokenizer, working memory
        get_context(agent=agent, session=session, query="warm up", max_tokens=8192)
    timings = []
    for _ in range(args.queries):
        session = rnd.choice(sessions)
        t0 = time.perf_counter()
        ctx = get_context(agent=agent, session=session, query=text(rnd, 6), max_tokens=8192)
        timings.append((time.perf_counter() - t0) * 1000)
        assert ctx.used_tokens <= 8192
    timings.sort()
    p50 = statistics.median(timings)
    p95 = timings[int(len(timings) * 0.95) - 1]
    print(f"{connection.vendor}: get_context over {args.queries} calls: "
          f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {timings[-1]:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
