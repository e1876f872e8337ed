"""contains_search with and without its trigram index, on N generated messages of one agent.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mh_bench_contains \\
        .venv/bin/python bench/contains.py --messages 100000
    DATABASE_URL=sqlite:////tmp/mh_bench_contains.sqlite3 \\
        .venv/bin/python bench/contains.py --messages 100000

Texts are LoCoMo turns plus 0-6 words of the corpus vocabulary (as bench/search_scale.py).
Four query sets: LoCoMo questions (what search_scale.py's contains mode sends: almost never
a substring, so the old query reads every row), words of 5+ characters from the turns
(rare and common), 6-16 character slices of stored turns (fragments that hit), and common
short texts (1-3 characters and frequent words). "before"
is the plain `icontains` query (PostgreSQL: with the GIN index dropped inside a rolled-back
transaction); "after" is contains_search. Timings are in-process, k = 10, newest first;
a freshly loaded PostgreSQL store is timed before and after VACUUM ANALYZE. On PostgreSQL
the load skips the BM25 triggers (session_replication_role) and builds the GIN index after
it: this agent's messages are then missing from keyword search, use a bench database.
"""

import argparse
import json
import os
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from apps.agents.models import Agent, Team  # noqa: E402
from apps.conversations.models import Message, Session  # noqa: E402
from apps.core.services import database_optimize  # noqa: E402
from apps.search.backends.base import substring_queryset, trigram_index  # noqa: E402
from apps.search.corpora import get_corpus  # noqa: E402
from apps.search.legs import contains_search  # noqa: E402

DATA = Path(__file__).resolve().parent.parent.parent / "shared/bench/locomo/locomo-dev.json"
ORDER = ("-created_at", "-id")
INDEX = trigram_index("conversations_message", "content")
COMMON = ["a", "I", "so", "the", "and", "you", "that", "I'm", "going to", "Caroline"]


def corpus_text() -> tuple[list[str], list[str]]:
    samples = json.loads(DATA.read_text())
    turns = [
        t["text"]
        for s in samples
        for key, value in s["conversation"].items()
        if key.startswith("session_") and isinstance(value, list)
        for t in value
    ]
    qas = [qa for s in samples for qa in s["qa"]]
    questions = [qa["question"] for qa in qas if qa.get("category") in (1, 2, 3, 4)]
    return turns, questions


def load(agent: Agent, n: int, turns: list[str], rng: random.Random) -> None:
    vocab = sorted({w for t in turns for w in t.split() if w.isalpha() and len(w) > 3})
    start, t0, batch, session = datetime(2024, 1, 1, tzinfo=UTC), time.perf_counter(), [], None
    if connection.vendor == "postgresql":
        # contains reads no side table: skip the BM25 triggers, build the GIN index after.
        with connection.cursor() as c:
            c.execute("SET session_replication_role = replica")
            c.execute(f"DROP INDEX IF EXISTS {INDEX}")
    for i in range(n):
        if i % 200 == 0:
            session = Session.objects.create(agent=agent, key=f"s{i // 200}", created_at=start)
        extra = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 6)))
        text = f"{rng.choice(turns)} {extra}".strip()
        batch.append(
            Message(id=uuid.uuid4(), agent=agent, session=session, role="user", content=text,
                    byte_size=len(text.encode()), created_at=start + timedelta(minutes=i))
        )  # fmt: skip
        if len(batch) == 5000 or i == n - 1:
            with transaction.atomic():
                Message.objects.bulk_create(batch)
            batch = []
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("RESET session_replication_role")
            c.execute("SET maintenance_work_mem = '512MB'")
            c.execute(
                f"CREATE INDEX {INDEX} ON conversations_message "
                "USING gin (UPPER((content)::text) gin_trgm_ops)"
            )
    print(f"loaded {n} messages in {time.perf_counter() - t0:.0f}s", flush=True)


def old_contains(agent: Agent, text: str) -> list:
    """The pre-index contains_search: Django's icontains, newest first."""
    corpus = get_corpus("messages")
    qs = substring_queryset(corpus, None, agent_id=agent.pk, field="content", text=text)
    return list(qs.order_by(*ORDER).values_list("pk", flat=True)[:10])


def new_contains(agent: Agent, text: str) -> list:
    hits = contains_search("messages", agent_id=agent.pk, text=text, limit=10, order_by=ORDER)
    return [h.object_id for h in hits]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def timed(label: str, fn, agent: Agent, sets: dict[str, list[str]]) -> dict[str, list]:
    found = {}
    for name, queries in sets.items():
        for q in queries[:3]:
            fn(agent, q)  # warm the cache
        times, found[name] = [], []
        for q in queries:
            t0 = time.perf_counter()
            found[name].append(fn(agent, q))
            times.append((time.perf_counter() - t0) * 1000)
        hits = sum(1 for f in found[name] if f) / len(queries)
        p50, p95, top = pct(times, 0.5), pct(times, 0.95), max(times)
        print(
            f"  {label:7s} {name:9s} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  max {top:7.1f} ms"
            f"  queries with hits {hits:.0%}",
            flush=True,
        )
    return found


def compare(agent: Agent, sets: dict[str, list[str]], state: str) -> None:
    print(f"{connection.vendor}, {state}, load average {os.getloadavg()[0]:.2f}", flush=True)
    if connection.vendor == "postgresql":
        with transaction.atomic():
            with connection.cursor() as c:
                c.execute(f"DROP INDEX {INDEX}")
            before = timed("before", old_contains, agent, sets)
            transaction.set_rollback(True)
    else:
        before = timed("before", old_contains, agent, sets)
    after = timed("after", new_contains, agent, sets)
    assert before == after, "contains_search must return the plain icontains query's rows"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--messages", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    call_command("migrate", verbosity=0)
    rng = random.Random(args.seed)
    turns, questions = corpus_text()
    team, _ = Team.objects.get_or_create(name="bench")
    agent, _ = Agent.objects.get_or_create(
        slug=f"contains-{args.messages}", defaults={"team": team}
    )
    fresh = not Message.objects.filter(agent=agent).exists()
    if fresh:
        load(agent, args.messages, turns, rng)
    slices = []
    for _ in range(args.queries):
        turn = rng.choice([t for t in turns if len(t) > 20])
        n = rng.randint(6, 16)
        i = rng.randrange(len(turn) - n)
        slices.append(turn[i : i + n])
    vocab = sorted({w.strip(".,!?") for t in turns for w in t.split() if len(w) > 4})
    words = rng.sample(vocab, args.queries)
    sets = {
        "questions": rng.sample(questions, args.queries),
        "words": words,
        "slices": slices,
        "common": COMMON,
    }
    if fresh and connection.vendor == "postgresql":
        compare(agent, sets, "right after the load (no ANALYZE)")
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("VACUUM ANALYZE conversations_message")
    else:
        database_optimize()
    pg = connection.vendor == "postgresql"
    compare(agent, sets, "after VACUUM ANALYZE" if pg else "after PRAGMA optimize")


if __name__ == "__main__":
    main()
