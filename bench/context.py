"""get_context latency with 100k messages and 10k facts in one agent.

    DATABASE_URL=... CACHE_URL=... .venv/bin/python bench/context.py [--messages N] [--facts N]
        [--embedder minilm|hash] [--reuse] [--legs N]

The test settings on whatever DATABASE_URL names, with the query embedder swapped in: by
default the offline MiniLM as memoryhub.settings.base configures it (1 thread), so every
timed call with a query pays one real model inference (each query is distinct, so the query
cache never hits); `--embedder hash` keeps the tests' HashEmbedder (microseconds), which
reproduces the figures before issue 14. Fact values are embedded with the same embedder, so
the relevant-facts provider's vector leg finds real neighbours; messages keep random unit
vectors (embedding 100k of them would take most of an hour), so the message relevance leg
costs what it does but never passes its threshold. Facts and queries are drawn from one
35-word vocabulary: each query word occurs in about a quarter of the facts (near the worst
case for the facts' BM25 leg), and every call with a query finds relevant facts.

The database is migrated and the agent "bench-context" is recreated, or kept with --reuse
when it already holds the requested numbers of messages and facts under the same embedder.
On PostgreSQL the messages HNSW index is dropped during the load and rebuilt after it
(bulk-load advice in docs/benchmarks.md). Timings are given with a query (the four message
legs, issue 24's memory leg over all 100k messages included, and the relevant facts) and
without one, and for the query embedding alone over the
same queries; --legs N adds the average time of each provider and leg over N sessions.
"""

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.test")

import django

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from apps.agents.models import Agent  # noqa: E402
from apps.agents.services import agent_create  # noqa: E402
from apps.agents.users import AGENT_ONLY  # noqa: E402
from apps.conversations.models import Message, Session  # noqa: E402
from apps.core.services import database_optimize  # noqa: E402
from apps.entries.services import entry_add  # noqa: E402
from apps.facts.models import Category, Fact  # noqa: E402
from apps.facts.selectors import facts_usable  # noqa: E402
from apps.memory.context import ContextRequest, get_context, legs, providers  # noqa: E402
from apps.providers.embeddings import get_embedder, vector_label  # noqa: E402
from apps.search.backends.base import hnsw_index  # noqa: E402
from apps.search.legs import keyword_search, vector_search  # noqa: E402
from memoryhub.settings import base as base_settings  # noqa: E402

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey yankee zulu "
         "coffee meeting tokyo berlin travel deploy review budget cat garden").split()  # fmt: skip
HASH = {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}}


def use_embedder(name: str) -> str:
    """Make `name` the configured embedder; its description, after one warm-up call."""
    entry = HASH
    if name == "minilm":
        entry = base_settings.MEMORYHUB_PROVIDERS["embedding"]
        if not entry["CLASS"].endswith(".MiniLMEmbedder"):
            raise SystemExit(f"the base settings embed with {entry['CLASS']}, not MiniLM")
    settings.MEMORYHUB_PROVIDERS = {**settings.MEMORYHUB_PROVIDERS, "embedding": entry}
    embedder = get_embedder()
    embedder.embed(["warm up"])  # MiniLM loads its model on first use
    return f"{embedder!r} ({vector_label(embedder)})"


def vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def text(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def load_messages(args, agent: Agent, sessions: list[Session], label: str) -> None:
    rng, rnd = np.random.default_rng(1), random.Random(1)
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


def load_facts(args, agent: Agent, label: str) -> None:
    """Facts in 20 categories, their values embedded with the configured embedder."""
    rng, rnd = np.random.default_rng(2), random.Random(2)
    t0 = time.perf_counter()
    cats = Category.objects.bulk_create(
        [Category(agent=agent, name=f"cat-{i}", embedding=v) for i, v in
         enumerate(vectors(rng, 20))]
    )  # fmt: skip
    values = [text(rnd, 10) for _ in range(args.facts)]
    fvecs = get_embedder().embed(values)
    print(f"embedded {args.facts} fact values in {time.perf_counter() - t0:.1f}s")
    now = timezone.now()
    Fact.objects.bulk_create(
        [
            Fact(
                agent=agent, category=cats[i % 20], key=f"fact-{i}", value=value,
                normalized=uuid.uuid4().hex, importance=rnd.random(), salience=rnd.random(),
                embedding=fvecs[i], embedding_model=label, created_at=now, updated_at=now,
            )
            for i, value in enumerate(values)
        ],
        batch_size=1000,
    )  # fmt: skip
    print(f"loaded {args.facts} facts in {time.perf_counter() - t0:.1f}s")


def load(args) -> tuple[Agent, list[Session]]:
    Agent.objects.filter(slug="bench-context").delete()
    agent = agent_create(slug="bench-context")
    label = vector_label()
    sessions = Session.objects.bulk_create(
        [Session(agent=agent, key=f"s{i}") for i in range(args.sessions)]
    )
    load_messages(args, agent, sessions, label)
    load_facts(args, agent, label)
    rnd = random.Random(3)
    for name in ["SOUL.md", "AGENTS.md", "USER.md"]:
        entry_add(agent=agent, name=name, content=text(rnd, 150))
    entry_add(agent=agent, name="MEMORY.md", content=text(rnd, 1300))
    return agent, sessions


def reusable(args) -> tuple[Agent, list[Session]] | None:
    """The loaded agent and its sessions when they match the requested sizes and embedder."""
    agent = Agent.objects.filter(slug="bench-context").first()
    if agent is None:
        return None
    label = vector_label()
    loaded = (
        Message.objects.filter(agent=agent, embedding_model=label).count(),
        Fact.objects.filter(agent=agent, embedding_model=label).count(),
        Session.objects.filter(agent=agent).count(),
    )
    if loaded != (args.messages, args.facts, args.sessions):
        print(f"not reusing: loaded (messages, facts) with {label}, sessions: {loaded}")
        return None
    sessions = sorted(Session.objects.filter(agent=agent), key=lambda s: int(s.key[1:]))
    print(f"reusing the loaded agent: {args.messages} messages, {args.facts} facts")
    return agent, sessions


def percentiles(label: str, timings: list[float]) -> None:
    timings = sorted(timings)
    p50 = statistics.median(timings)
    p95 = timings[int(len(timings) * 0.95) - 1]
    print(f"{connection.vendor}: {label} over {len(timings)} calls: "
          f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {timings[-1]:.1f} ms")  # fmt: skip


def workload(sessions: list[Session], n: int, seed: int) -> list[tuple[Session, str]]:
    """n (session, 6-word query) pairs; the queries are distinct, so no query cache hits."""
    rnd, seen, out = random.Random(seed), set(), []
    while len(out) < n:
        session, query = rnd.choice(sessions), text(rnd, 6)
        if query not in seen:
            seen.add(query)
            out.append((session, query))
    return out


@dataclass
class FactCounts:
    included: int = 0  # relevant (not salient) facts kept in the context
    dropped: int = 0  # relevant facts over the budget


def time_calls(agent: Agent, calls: list, *, with_query: bool) -> tuple[list[float], FactCounts]:
    """get_context over `calls`; each pass starts with the same cold working memory."""
    cache.clear()
    for session, _ in calls[:5]:  # warm-up: connections, tokenizer, model, working memory
        get_context(agent=agent, session=session, query="warm up", max_tokens=8192)
    request = ContextRequest(
        agent=agent, config=agent.config, session=calls[0][0], query=None, max_tokens=8192
    )
    salient = {p.name for p in providers.salient_facts(request)}
    timings, counts = [], FactCounts()
    for session, query in calls:
        query = query if with_query else None
        t0 = time.perf_counter()
        ctx = get_context(agent=agent, session=session, query=query, max_tokens=8192)
        timings.append((time.perf_counter() - t0) * 1000)
        assert ctx.used_tokens <= 8192
        counts.included += sum(p.kind == "fact" and p.name not in salient for p in ctx.parts)
        counts.dropped += sum(d["kind"] == "fact" and d["name"] not in salient for d in ctx.dropped)
    return timings, counts


def time_embedding(calls: list) -> list[float]:
    """The embedder alone on each query (no query cache), as query_vector runs it."""
    embedder = get_embedder()
    timings = []
    for _, query in calls:
        t0 = time.perf_counter()
        embedder.embed([query])
        timings.append((time.perf_counter() - t0) * 1000)
    return timings


def fact_legs(request: ContextRequest) -> dict:
    """The relevant-facts provider's two searches, as facts_relevant runs them."""
    vector, _ = legs.query_vector(request)
    config, agent = request.config, request.agent
    k = config.context_relevant_fact_limit
    usable = facts_usable(agent=agent, audience=AGENT_ONLY)
    t0 = time.perf_counter()
    hits = vector_search("facts", agent_id=agent.pk, vector=vector, limit=k, queryset=usable)
    t1 = time.perf_counter()
    keyword_search("facts", agent_id=agent.pk, query=request.query, limit=k, queryset=usable)
    t2 = time.perf_counter()
    above = sum(h.score >= config.context_fact_relevance_threshold for h in hits)
    return {"vector": (t1 - t0) * 1000, "keyword": (t2 - t1) * 1000, "above": above}


def time_legs(agent: Agent, sessions: list[Session], n: int) -> None:
    """Average ms of each provider and leg, on a fresh request each (no shared reads); the
    query embedding runs first, so the legs after it find the vector in the query cache."""
    steps = {
        "query embedding (query_vector, cache miss)": legs.query_vector,
        "relevance leg": legs.relevance,
        "memory leg (agent-wide hybrid search, windows)": lambda r: legs.memory(r, held=set()),
        "relevant facts (provider)": providers.relevant_facts,
        "salient facts": providers.salient_facts,
        "salience leg": legs.salience,
        "recency leg (working memory)": legs.recency,
        "documents": providers.workspace_documents,
        "learnings": providers.active_learnings,
        "error hints": providers.failure_hints,
        "summary": providers.rolling_summary,
    }
    totals = dict.fromkeys(steps, 0.0)
    split = {"vector": 0.0, "keyword": 0.0, "above": 0}
    config = agent.config
    for session, query in workload(sessions[:n], n, seed=4):
        for name, step in steps.items():
            request = ContextRequest(
                agent=agent, config=config, session=session, query=query, max_tokens=8192
            )
            t0 = time.perf_counter()
            step(request)
            totals[name] += (time.perf_counter() - t0) * 1000
        request = ContextRequest(
            agent=agent, config=config, session=session, query=query, max_tokens=8192
        )
        for key, value in fact_legs(request).items():
            split[key] += value
    for name, total in totals.items():
        print(f"{connection.vendor}: {name}: {total / n:.2f} ms")
    print(f"{connection.vendor}:   of which facts vector leg {split['vector'] / n:.2f} ms "
          f"({split['above'] / n:.1f} hits >= threshold), facts BM25 leg "
          f"{split['keyword'] / n:.2f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", choices=["minilm", "hash"], default="minilm")
    parser.add_argument("--reuse", action="store_true", help="keep a loaded agent of this size")
    parser.add_argument("--legs", type=int, default=0, help="time each leg over N sessions")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # progress shows when redirected to a file
    print(f"query embedder: {use_embedder(args.embedder)}")
    call_command("migrate", verbosity=0)
    loaded = reusable(args) if args.reuse else None
    agent, sessions = loaded or load(args)
    # Planner statistics, as a deployment has them: PostgreSQL's autovacuum, and on SQLite
    # the hourly core.optimize_database task.
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("ANALYZE")
    database_optimize()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) before timing")
    calls = workload(sessions, args.queries, seed=2)
    timings, counts = time_calls(agent, calls, with_query=True)
    percentiles("get_context with a query", timings)
    print(f"{connection.vendor}: relevant facts per call: {counts.included / len(calls):.2f} "
          f"included, {counts.dropped / len(calls):.2f} over the budget")  # fmt: skip
    percentiles("get_context without a query", time_calls(agent, calls, with_query=False)[0])
    percentiles("query embedding alone", time_embedding(calls))
    if args.legs:
        time_legs(agent, sessions, args.legs)
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) after timing")


if __name__ == "__main__":
    main()
