"""Soak on PostgreSQL: many writers and searchers for minutes; nothing lost, nothing doubled.

    .venv/bin/python bench/soak.py [--seconds 300] [--writers 16] [--searchers 4]
                                   [--minilm] [--workers 1]

Self-contained: a private PostgreSQL cluster (initdb on a free port, fsync on) or an empty
database given with --database-url, a private redis-server (broker and cache), a loopback
OpenAI-compatible embeddings server (HashEmbedder vectors, no model; with --minilm the local
MiniLM instead, the production default, one thread per worker), this tree's web server
(gunicorn, --web-workers x --threads) and --workers real Celery workers, all on production
settings.

For --seconds, --writers threads append 1-3 messages per request (each with an idempotency
key) to sessions spread over --agents agents, and --searchers threads search them in
hybrid, keyword and semantic mode in turn. Then the messages in the database are counted
against those acknowledged (201). Reported: appends and messages acknowledged, messages
present, duplicates, server errors (5xx and transport failures), p50/p95/p99 latency per
operation, the embedding backlog when the writers stopped and the seconds it took to drain,
and the load average during the run.
Exit status 1 unless present == acknowledged, 0 duplicates and 0 server errors.
"""

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._http import Api, percentile  # noqa: E402
from bench.slow_embedder import SlowEmbeddings  # noqa: E402 - delay 0: a fast loopback embedder
from tests.support.celery_process import WorkerProcess  # noqa: E402
from tests.support.services import (  # noqa: E402
    PostgresCluster,
    RedisServer,
    WebServer,
    create_agent,
    migrate,
    psql,
    service_env,
)

WORDS = (
    "deploy invoice tokyo billing retry vector budget travel berlin dinner tea cat storm "
    "password staging review ticket release schema index cache queue worker backup"
).split()
MODES = ("hybrid", "keyword", "semantic")


@dataclass
class Record:
    """Per operation: latencies of answered requests, statuses, failures without an answer."""

    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, dict[int, int]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(int))
    )
    transport: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    acknowledged: list[str] = field(default_factory=list)  # contents of 201 appends
    attempted: list[str] = field(default_factory=list)  # every content sent
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, op: str, status: int, seconds: float) -> None:
        with self.lock:
            self.seconds[op].append(seconds)
            self.statuses[op][status] += 1

    def failed(self, op: str) -> None:
        with self.lock:
            self.transport[op] += 1


def writer(api: Api, session: str, n: int, rec: Record, stop: threading.Event) -> None:
    rng = random.Random(n)
    i = 0
    while not stop.is_set():
        batch = []
        for _ in range(rng.randint(1, 3)):
            words = " ".join(rng.choice(WORDS) for _ in range(6))
            content = f"soak w{n} m{i} {words}"
            batch.append({"role": rng.choice(("user", "assistant")), "content": content,
                          "idempotency_key": f"w{n}-m{i}"})  # fmt: skip
            i += 1
        contents = [m["content"] for m in batch]
        with rec.lock:
            rec.attempted.extend(contents)
        try:
            reply = api.request("POST", f"/sessions/{session}/messages", {"messages": batch})
        except OSError:
            rec.failed("append")
            continue
        rec.answer("append", reply.status, reply.seconds)
        if reply.status == 201:
            with rec.lock:
                rec.acknowledged.extend(contents)


def searcher(api: Api, n: int, rec: Record, stop: threading.Event) -> None:
    rng = random.Random(1000 + n)
    i = 0
    while not stop.is_set():
        mode = MODES[i % len(MODES)]
        query = " ".join(rng.sample(WORDS, 2))
        try:
            reply = api.request("POST", "/search", {"query": query, "mode": mode, "k": 10})
        except OSError:
            rec.failed(f"search {mode}")
        else:
            rec.answer(f"search {mode}", reply.status, reply.seconds)
        i += 1


def sample_load(samples: list[float], stop: threading.Event) -> None:
    while not stop.wait(5):
        samples.append(os.getloadavg()[0])


def count_messages(url: str) -> tuple[int, int, set[str]]:
    """(rows, distinct contents, contents) of the soak's messages."""
    rows = psql(url, "SELECT content FROM conversations_message WHERE content LIKE 'soak %'")
    contents = [r[0] for r in rows]
    return len(contents), len(set(contents)), set(contents)


PENDING = "SELECT count(*) FROM conversations_message WHERE embedding IS NULL"


def _embedder_env(args: argparse.Namespace, loopback: str) -> dict[str, str]:
    """The loopback HashEmbedder server, or (--minilm) the local model on one thread per
    worker process."""
    if args.minilm:
        return {"MEMORYHUB_EMBEDDING_THREADS": "1"}
    return {"MEMORYHUB_EMBEDDING_URL": loopback, "MEMORYHUB_EMBEDDING_MODEL": "soak-hash"}


def drain_embeddings(url: str, timeout: float) -> tuple[int, float]:
    """Wait (bounded) for the worker to embed every message: (rows left, seconds waited)."""
    start = time.monotonic()
    while True:
        left = int(psql(url, PENDING)[0][0])
        if left == 0 or time.monotonic() - start > timeout:
            return left, time.monotonic() - start
        time.sleep(1)


def run(args: argparse.Namespace, work: Path) -> dict:
    embeddings = SlowEmbeddings(0.0)
    threading.Thread(target=embeddings.serve_forever, daemon=True).start()
    cluster = None if args.database_url else PostgresCluster(fsync=True)
    broker = RedisServer(work)
    web = None
    workers: list[WorkerProcess] = []
    try:
        url = args.database_url or cluster.init(database="memoryhub_soak").url()
        broker.start()
        env = service_env(
            work / "data",
            DATABASE_URL=url,
            CELERY_BROKER_URL=broker.url(0),
            CACHE_URL=broker.url(1),
            **_embedder_env(args, embeddings.url),
        )
        migrate(env)
        keys = [create_agent(env, f"soak-{a}") for a in range(args.agents)]
        web = WebServer(env, work / "web.log", workers=args.web_workers, threads=args.threads)
        workers = [
            WorkerProcess(env=env, log=work / f"worker-{n}.log", whole_env=True)
            for n in range(args.workers)
        ]
        apis = [web.api(k, timeout=60) for k in keys]
        sessions = []
        for n in range(args.writers):
            api = apis[n % len(apis)]
            status, body, _ = api.call("POST", "/sessions", {"key": f"soak-{n}"})
            assert status == 201, (status, body)
            sessions.append((api, body["id"]))

        rec, stop, load = Record(), threading.Event(), [os.getloadavg()[0]]
        threads = [
            threading.Thread(target=writer, args=(api, sid, n, rec, stop))
            for n, (api, sid) in enumerate(sessions)
        ]
        threads += [
            threading.Thread(target=searcher, args=(apis[n % len(apis)], n, rec, stop))
            for n in range(args.searchers)
        ]
        threads.append(threading.Thread(target=sample_load, args=(load, stop)))
        began = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(args.seconds)  # the soak itself: a fixed duration, not a synchronisation
        stop.set()
        for t in threads:
            t.join(120)
        elapsed = time.monotonic() - began
        load_end = os.getloadavg()

        backlog = int(psql(url, PENDING)[0][0])
        left, drained = drain_embeddings(url, args.drain_seconds)
        rows, distinct, present = count_messages(url)
        log = web.log_tail(10**7)
        return {
            "rec": rec,
            "elapsed": elapsed,
            "rows": rows,
            "distinct": distinct,
            "present": present,
            "embedding_backlog": backlog,
            "embedding_left": left,
            "drain_seconds": drained,
            "load": load,
            "load_end": load_end,
            "server_log_errors": log.count("Internal Server Error") + log.count("Traceback"),
            "database": "private cluster (fsync on)" if cluster else "given --database-url",
        }
    finally:
        for service in (*workers, web):
            if service is not None:
                service.stop()
        broker.stop()
        if cluster is not None:
            cluster.destroy()
        embeddings.shutdown()


def report(args: argparse.Namespace, r: dict) -> int:
    rec: Record = r["rec"]
    ack, attempted, present = rec.acknowledged, set(rec.attempted), r["present"]
    server_errors = sum(n for op in rec.statuses.values() for s, n in op.items() if s >= 500)
    transport = sum(rec.transport.values())
    other = {
        op: {s: n for s, n in st.items() if s >= 300 and s < 500}
        for op, st in rec.statuses.items()
        if any(300 <= s < 500 for s in st)
    }
    appends = sum(rec.statuses["append"].values())
    print(
        f"soak: {r['elapsed']:.0f} s, {args.writers} writers + {args.searchers} searchers, "
        f"{args.agents} agents, gunicorn {args.web_workers} x {args.threads} threads, "
        f"{args.workers} celery worker(s) (solo), embedder: "
        f"{'MiniLM, 1 thread each' if args.minilm else 'loopback hash'}, "
        f"PostgreSQL: {r['database']}, {os.cpu_count()} CPUs"
    )
    print(f"appends answered: {appends} ({appends / r['elapsed']:.1f}/s), "
          f"201: {rec.statuses['append'].get(201, 0)}")  # fmt: skip
    print(f"messages sent: {len(attempted)}, acknowledged: {len(ack)}, present: {len(present)} "
          f"(rows {r['rows']}), duplicates: {r['rows'] - r['distinct']}")  # fmt: skip
    missing = set(ack) - present
    extra = present - set(ack)
    print(f"acknowledged but missing: {len(missing)}, present but unacknowledged: {len(extra)}")
    logged = r["server_log_errors"]
    print(f"server errors: {server_errors} (5xx), transport failures: {transport}, "
          f"server log errors: {logged}, other non-2xx: {other or 'none'}")  # fmt: skip
    for op in sorted(rec.seconds):
        s = rec.seconds[op]
        print(
            f"{op:16} n={len(s):6d}  p50 {percentile(s, 50) * 1000:7.1f} ms  "
            f"p95 {percentile(s, 95) * 1000:7.1f} ms  p99 {percentile(s, 99) * 1000:7.1f} ms  "
            f"max {max(s) * 1000:7.1f} ms"
        )
    load = r["load"]
    print(f"load average (1 min, sampled every 5 s): mean {sum(load) / len(load):.2f}, "
          f"max {max(load):.2f}; at the end 1/5/15 min: "
          f"{' / '.join(f'{x:.2f}' for x in r['load_end'])}")  # fmt: skip
    print(f"embeddings: {r['embedding_backlog']} messages unembedded when the writers stopped, "
          f"{r['embedding_left']} after {r['drain_seconds']:.0f} s of draining")  # fmt: skip
    problems = []
    if missing or len(present) != len(ack) or extra:
        problems.append("present != acknowledged")
    if r["rows"] != r["distinct"]:
        problems.append("duplicates")
    if server_errors or transport or r["server_log_errors"]:
        problems.append("server errors")
    print("FAIL: " + ", ".join(problems) if problems else "PASS")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--searchers", type=int, default=4)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--web-workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8, help="threads per gunicorn worker")
    parser.add_argument("--drain-seconds", type=float, default=120)
    parser.add_argument("--workers", type=int, default=1, help="Celery worker processes")
    parser.add_argument("--minilm", action="store_true", help="the local MiniLM, not loopback")
    parser.add_argument("--database-url", default="", help="an empty database (default: private)")
    parser.add_argument("--keep", default="", help="a directory to keep the logs in")
    args = parser.parse_args()
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        return report(args, run(args, Path(args.keep)))
    with tempfile.TemporaryDirectory(prefix="memoryhub-soak-") as work:
        result = run(args, Path(work))
    return report(args, result)


if __name__ == "__main__":
    sys.exit(main())
