"""Server time of the review pages for a session of 10,000 messages: the timeline's first
page and the search page (hybrid and keyword modes).

    .venv/bin/python bench/review.py [--messages 10000] [--requests 30]          # SQLite
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/memoryhub_bench CACHE_URL=redis://... \\
        .venv/bin/python bench/review.py                                         # PostgreSQL

Uses the test settings (deterministic HashEmbedder for the query, random unit vectors for
the stored messages) in a fresh temporary data folder that is removed afterwards; SQLite's
database lives there, PostgreSQL's is the one DATABASE_URL names (migrated; the bench's
agent is recreated, then deleted). One session holds the messages: user and assistant
turns with a tool call every 50 messages, compacted as a 10,000-message session would be
(max_history_bytes 64 KiB: a compact marker, its archive, the hot window after it).

Each page is requested in-process through Django's test client, logged in as an editor of
the agent's team: the time from request to response, middleware, queries and template
included, after 5 warm-up requests; p50/p95/max over --requests. Over --target ms, the
page's slowest queries are printed.
"""

import argparse
import atexit
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# A fresh data folder (SQLite's database, the file cache), removed when the bench exits.
os.environ["MEMORYHUB_DATA_DIR"] = tempfile.mkdtemp(prefix="mh-bench-review-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.test")

import django

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402
from django.urls import reverse  # noqa: E402

from apps.agents.models import Agent, MemberRole  # noqa: E402
from apps.agents.services import agent_create, membership_set  # noqa: E402
from apps.conversations.models import CompactMarker, Message, Session  # noqa: E402
from apps.core.services import database_optimize  # noqa: E402
from apps.lifecycle.models import Trigger  # noqa: E402
from apps.lifecycle.services import session_compact  # noqa: E402
from apps.providers.embeddings import get_embedder, vector_label  # noqa: E402
from apps.search.backends.base import hnsw_index  # noqa: E402

DATA_DIR = os.environ["MEMORYHUB_DATA_DIR"]
atexit.register(shutil.rmtree, DATA_DIR, ignore_errors=True)
SLUG = "bench-review"
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey yankee zulu "
         "coffee meeting tokyo berlin travel deploy review budget cat garden").split()  # fmt: skip
QUERIES = ["deploy berlin budget", "coffee meeting tokyo", "garden cat", "travel review"]


def _text(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def _message(agent, session, i: int, at: datetime, rnd: random.Random, vec, label) -> Message:
    """Turn i: user and assistant alternate; every 50th pair is a tool call and its result."""
    common = {"agent": agent, "session": session, "created_at": at, "embedding": vec,
              "embedding_model": label}  # fmt: skip
    if i % 50 == 48:
        return Message(role="assistant", content="", tool_calls_json=[{
            "id": f"call_{i}", "type": "function",
            "function": {"name": "lookup", "arguments": '{"q": "deploy"}'}}],
            byte_size=60, token_count=12, **common)  # fmt: skip
    if i % 50 == 49:
        content = _text(rnd, 20)
        return Message(role="tool", tool_call_id=f"call_{i - 1}", tool_name="lookup",
                       content=content, byte_size=len(content), token_count=20,
                       **common)  # fmt: skip
    content = _text(rnd, rnd.randint(8, 40))
    role = "user" if i % 2 == 0 else "assistant"
    return Message(role=role, content=content, byte_size=len(content.encode()),
                   token_count=len(content.split()), **common)  # fmt: skip


def load(n: int) -> tuple[Agent, Session]:
    Agent.objects.filter(slug=SLUG).delete()
    agent = agent_create(slug=SLUG, team_name="bench-review")
    session = Session.objects.create(agent=agent, key="long", title="10,000 messages")
    rng, rnd = np.random.default_rng(1), random.Random(1)
    label = vector_label(get_embedder())
    vecs = rng.standard_normal((n, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    start = datetime.now(UTC) - timedelta(days=20)
    pg = connection.vendor == "postgresql"
    index = hnsw_index(Message._meta.db_table, "embedding")
    if pg:  # bulk loads are much faster with HNSW built after (docs/benchmarks.md)
        with connection.cursor() as c:
            c.execute(f"DROP INDEX IF EXISTS {index}")
    t0 = time.perf_counter()
    rows = [
        _message(agent, session, i, start + timedelta(seconds=90 * i), rnd, vecs[i], label)
        for i in range(n)
    ]
    Message.objects.bulk_create(rows, batch_size=1000)
    if pg:
        with connection.cursor() as c:
            c.execute(
                f"CREATE INDEX {index} ON {Message._meta.db_table} "
                "USING hnsw (embedding vector_cosine_ops)"
            )
    print(f"loaded {n} messages in {time.perf_counter() - t0:.1f}s", flush=True)
    agent.settings = {"max_history_bytes": 64 * 1024}
    agent.save()
    t0 = time.perf_counter()
    [run] = session_compact(session=session, trigger=Trigger.API)
    markers = CompactMarker.objects.filter(session=session).count()
    print(f"compacted ({run.status}, {run.message_count} messages behind {markers} marker) "
          f"in {time.perf_counter() - t0:.1f}s", flush=True)  # fmt: skip
    return agent, session


def editor_client(agent: Agent) -> Client:
    user, _ = get_user_model().objects.get_or_create(username="bench-review-editor")
    membership_set(team=agent.team, user=user, role=MemberRole.EDITOR)
    client = Client()
    client.force_login(user)
    return client


def time_page(client: Client, label: str, urls: list[str], args) -> tuple[float, float]:
    """p50 and p95 in ms over args.requests GETs cycling through urls, after a warm-up."""
    for url in (urls * 5)[:5]:
        response = client.get(url)
        assert response.status_code == 200, url
        hits = response.context.get("hits", "-")  # a search page: it must have found something
        assert hits == "-" or len(hits) > 0, f"no hits on {url}"
    timings = []
    for i in range(args.requests):
        url = urls[i % len(urls)]
        t0 = time.perf_counter()
        response = client.get(url)
        timings.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    timings.sort()
    p50 = statistics.median(timings)
    p95 = timings[max(0, round(0.95 * len(timings)) - 1)]
    verdict = "ok" if p95 < args.target else f"OVER {args.target:.0f} ms"
    print(f"{connection.vendor}: {label:34s} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  "
          f"max {timings[-1]:6.1f} ms  ({verdict})", flush=True)  # fmt: skip
    if p95 >= args.target or args.queries:
        slowest(client, urls[0])
    return p50, p95


def slowest(client: Client, url: str, top: int = 5) -> None:
    """The page's queries, slowest first: what to fix when a page is over target."""
    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    queries = sorted(captured.captured_queries, key=lambda q: float(q["time"]), reverse=True)
    total = sum(float(q["time"]) for q in queries) * 1000
    print(f"    {len(queries)} queries, {total:.1f} ms in the database; slowest:")
    for q in queries[:top]:
        print(f"    {float(q['time']) * 1000:7.1f} ms  {q['sql'][:300]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--target", type=float, default=150.0, help="ms, p95")
    parser.add_argument("--queries", action="store_true", help="always list the slowest queries")
    args = parser.parse_args()
    setup_test_environment()  # the test client's host is allowed
    call_command("migrate", verbosity=0)
    agent, session = load(args.messages)
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("ANALYZE")
    database_optimize()  # planner statistics, as the hourly beat task keeps them on SQLite
    client = editor_client(agent)
    timeline = reverse("review:timeline", kwargs={"slug": SLUG, "session_id": session.pk})
    search = reverse("review:search", kwargs={"slug": SLUG})
    load1, load5, _ = os.getloadavg()
    print(f"\n{connection.vendor}: one session of {args.messages} messages, "
          f"{args.requests} requests per page; load average {load1:.1f} / {load5:.1f}, "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    time_page(client, "timeline, first page", [timeline], args)
    for mode in ("hybrid", "keyword"):
        urls = [f"{search}?q={q.replace(' ', '+')}&mode={mode}" for q in QUERIES]
        time_page(client, f"search, {mode}", urls, args)
        urls = [f"{u}&session={session.key}" for u in urls]
        time_page(client, f"search, {mode}, in the session", urls, args)


if __name__ == "__main__":
    try:
        main()
    finally:
        Agent.objects.filter(slug=SLUG).delete()
