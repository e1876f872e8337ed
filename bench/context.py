"""get_context latency with 100k messages and 10k facts in one agent.

    DATABASE_URL=... CACHE_URL=... .venv/bin/python bench/context.py [--messages N] [--facts N]
        [--reuse] [--legs N]

Uses the test settings (deterministic HashEmbedder for the query, random unit vectors for
stored rows) on whatever DATABASE_URL names; the database is migrated and the agent
"bench-context" is recreated, or kept with --reuse when it already holds the requested
numbers of messages and facts. On PostgreSQL the messages HNSW index is dropped during the
load and rebuilt after it (bulk-load advice in docs/benchmarks.md). Timings are given with
a query (all three message legs) and without one (no relevance leg); --legs N adds the
average time of each provider and leg over N sessions.
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
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from apps.agents.models import Agent  # noqa: E402
from apps.agents.services import agent_create  # noqa: E402
from apps.conversations.models import Message, Session  # noqa: E402
from apps.core.services import database_optimize  # noqa: E402
from apps.entries.services import entry_add  # noqa: E402
from apps.facts.models import Category, Fact  # noqa: E402
from apps.memory.context import ContextRequest, get_context, legs, providers  # noqa: E402
from apps.providers.embeddings import get_embedder, vector_label  # noqa: E402
from apps.search.backends.base import hnsw_index  # noqa: E402

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


def reusable(args) -> tuple[Agent, list[Session]] | None:
    """The loaded agent and its sessions when they match the requested sizes."""
    agent = Agent.objects.filter(slug="bench-context").first()
    if agent is None:
        return None
    loaded = (
        Message.objects.filter(agent=agent).count(),
        Fact.objects.filter(agent=agent).count(),
        Session.objects.filter(agent=agent).count(),
    )
    if loaded != (args.messages, args.facts, args.sessions):
        return None
    sessions = sorted(Session.objects.filter(agent=agent), key=lambda s: int(s.key[1:]))
    print(f"reusing the loaded agent: {args.messages} messages, {args.facts} facts")
    return agent, sessions


def percentiles(label: str, timings: list[float]) -> None:
    timings = sorted(timings)
    p50 = statistics.median(timings)
    p95 = timings[int(len(timings) * 0.95) - 1]
    print(f"{connection.vendor}: get_context {label} over {len(timings)} calls: "
          f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {timings[-1]:.1f} ms")  # fmt: skip


def time_calls(agent: Agent, sessions: list[Session], args, *, with_query: bool) -> list[float]:
    """200 calls on random sessions; each pass starts with the same cold working memory."""
    cache.clear()
    for session in sessions[:5]:  # warm-up: connections, tokenizer, working memory
        get_context(agent=agent, session=session, query="warm up", max_tokens=8192)
    rnd = random.Random(2)
    timings = []
    for _ in range(args.queries):
        session = rnd.choice(sessions)
        query = text(rnd, 6) if with_query else None
        t0 = time.perf_counter()
        ctx = get_context(agent=agent, session=session, query=query, max_tokens=8192)
        timings.append((time.perf_counter() - t0) * 1000)
        assert ctx.used_tokens <= 8192
    return timings


def time_legs(agent: Agent, sessions: list[Session], n: int) -> None:
    """Average ms of each provider and leg, on a fresh request each (no shared reads)."""
    steps = {
        "relevance leg": legs.relevance,
        "salient facts": providers.salient_facts,
        "salience leg": legs.salience,
        "recency leg (working memory)": legs.recency,
        "documents + learnings (one query)": lambda r: (
            providers.workspace_documents(r),
            providers.learnings_files(r),
        ),
        "summary": providers.rolling_summary,
    }
    rnd = random.Random(3)
    totals = dict.fromkeys(steps, 0.0)
    config = agent.config
    for session in sessions[:n]:
        query = text(rnd, 6)
        for name, step in steps.items():
            request = ContextRequest(
                agent=agent, config=config, session=session, query=query, max_tokens=8192
            )
            t0 = time.perf_counter()
            step(request)
            totals[name] += (time.perf_counter() - t0) * 1000
    for name, total in totals.items():
        print(f"{connection.vendor}: {name}: {total / n:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--reuse", action="store_true", help="keep a loaded agent of this size")
    parser.add_argument("--legs", type=int, default=0, help="time each leg over N sessions")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    loaded = reusable(args) if args.reuse else None
    agent, sessions = loaded or load(args)
    # Planner statistics, as a deployment has them: PostgreSQL's autovacuum, and on SQLite
    # the hourly core.optimize_database task.
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("ANALYZE")
    database_optimize()
    percentiles("with a query", time_calls(agent, sessions, args, with_query=True))
    percentiles("without a query", time_calls(agent, sessions, args, with_query=False))
    if args.legs:
        time_legs(agent, sessions, args.legs)


if __name__ == "__main__":
    main()
