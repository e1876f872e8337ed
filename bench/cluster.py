"""Scale-out on loopback: N web processes and M Celery workers on one PostgreSQL and Redis.

    .venv/bin/python bench/cluster.py [--shapes 1x1,2x2,2x4] [--seconds 120] [--writers 16]

Self-contained, every part its own process, as on separate machines: a private PostgreSQL
primary (initdb, fsync on) and one streaming replica of it (pg_basebackup -R, its own port),
a private redis-server (broker and cache, no persistence), a loopback OpenAI-compatible
embeddings server (HashEmbedder vectors; at once, or after --embed-ms-per-text ms per text
of a request, a sleep standing in for a remote model), and per shape N x gunicorn
(memoryhub.wsgi, --web-workers x --threads, each its own port and data dir), M x
`celery worker` (one task at a time) and one beat, all on production settings.
The web processes get DATABASE_REPLICA_URL (the replica), for read routing once it exists.

Each shape (N, M) runs on a fresh database and an empty Redis: bench/soak.py's writers and
searchers, plus get_context readers, for --seconds, every request to the next web process
in turn. Then the messages are counted against those acknowledged, the workers drain the
embedding backlog, and the replica must hold every message. Reported per shape:
appends/s, embeddings/s, p50/p95 per operation, the backlog when the writers stopped and
the seconds to drain it, lost / duplicated / unacknowledged messages, the replica's lag,
PostgreSQL size per message and the 1-minute load average; then a table of all shapes and
the last shape's pipeline throughput over the first's. Exit status 1 unless every shape had
0 lost, 0 duplicated, 0 unacknowledged, 0 server errors and a replica that caught up.
"""

import argparse
import itertools
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._cluster_report import report_shape, summary  # noqa: E402
from bench._http import Api, Reply, fetch  # noqa: E402
from bench.slow_embedder import SlowEmbeddings  # noqa: E402
from bench.soak import (  # noqa: E402
    WORDS,
    Record,
    count_messages,
    drain_embeddings,
    searcher,
    writer,
)
from tests.support.celery_process import ProcessGroup, WorkerProcess  # noqa: E402
from tests.support.services import (  # noqa: E402
    PostgresCluster,
    RedisServer,
    WebServer,
    create_agent,
    migrate,
    psql,
    service_env,
    wait_for,
)

TEMPLATE = "memoryhub_template"
BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
SAMPLE_SQL = """SELECT
  (SELECT count(*) FROM conversations_message WHERE embedding IS NOT NULL),
  coalesce((SELECT extract(epoch FROM replay_lag) FROM pg_stat_replication LIMIT 1), 0),
  coalesce((SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)
            FROM pg_stat_replication WHERE state = 'streaming' LIMIT 1), -1)"""


@dataclass
class RoundRobinApi(Api):
    """One agent's key; each request goes to the next web process in turn."""

    bases: tuple[str, ...] = ()
    _turn: "itertools.count[int]" = field(default_factory=itertools.count, repr=False)

    def request(self, method: str, path: str, body: Any = None) -> Reply:
        base = self.bases[next(self._turn) % len(self.bases)]
        auth = {"Authorization": f"Bearer {self.key}"}
        return fetch(method, base + path, body, headers=auth, timeout=self.timeout)


class Replica(PostgresCluster):
    """A hot standby of `primary`: pg_basebackup -R (standby.signal and primary_conninfo),
    streaming WAL, on its own port and data directory."""

    def follow(self, primary: PostgresCluster) -> "Replica":
        address = ("-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres")
        self._run(
            "pg_basebackup", *address, "-D", str(self.data), "-R", "-X", "stream", "-c", "fast"
        )
        self.start()
        self.database = primary.database
        return self


def start_primary(primary: PostgresCluster) -> None:
    primary.init(database="memoryhub_admin")  # each shape gets its own database beside it
    with (primary.data / "pg_hba.conf").open("a") as hba:  # initdb's default, made explicit
        hba.write("host replication postgres 127.0.0.1/32 trust\n")
    psql(primary.url(), "SELECT pg_reload_conf()")
    level = psql(primary.url(), "SHOW wal_level")[0][0]
    if level not in ("replica", "logical"):
        raise RuntimeError(f"wal_level is {level}: a streaming replica needs replica")


def start_embeddings(work: Path, ms_per_text: float) -> tuple[ProcessGroup, str]:
    """This file's --serve-embeddings in its own process (not a thread of the clients' GIL)."""
    url_file = work / "embeddings.url"
    command = [sys.executable, __file__, "--serve-embeddings", str(url_file),
               "--embed-ms-per-text", str(ms_per_text)]  # fmt: skip
    proc = ProcessGroup(command, env=dict(os.environ), log=work / "embeddings.log")
    url = wait_for(lambda: url_file.exists() and url_file.read_text().strip(), 30, "embeddings")
    return proc, url


def serve_embeddings(url_file: str, ms_per_text: float) -> int:
    server = SlowEmbeddings(0.0, per_text=ms_per_text / 1000)
    Path(url_file).write_text(server.url + "\n")
    server.serve_forever()
    return 0


def contexter(pairs: list[tuple[Api, str]], n: int, rec: Record, stop: threading.Event) -> None:
    """get_context of the writers' sessions with a two-word query; lifecycle off (a read)."""
    rng = random.Random(2000 + n)
    while not stop.is_set():
        api, session = rng.choice(pairs)
        body = {"session_id": session, "query": " ".join(rng.sample(WORDS, 2)), "lifecycle": "off"}
        try:
            reply = api.request("POST", "/context", body)
        except OSError:
            rec.failed("context")
        else:
            rec.answer("context", reply.status, reply.seconds)


def sampler(url: str, samples: list[tuple[float, ...]], stop: threading.Event) -> None:
    """Every 5 s: (seconds, 1-min load, embedded rows, replay lag s, replay lag bytes)."""
    began = time.monotonic()
    while not stop.wait(5):
        try:
            row = psql(url, SAMPLE_SQL)[0]
        except subprocess.SubprocessError:  # a slow moment of psql: the next sample counts
            continue
        values = (float(row[0]), float(row[1]), float(row[2]))
        samples.append((time.monotonic() - began, os.getloadavg()[0], *values))


@dataclass
class Shape:
    """One (N, M) run's services: stopped beat first, web last, whatever happened."""

    webs: list[WebServer] = field(default_factory=list)
    workers: list[WorkerProcess] = field(default_factory=list)
    beat: ProcessGroup | None = None

    def stop(self) -> None:
        for service in [*([self.beat] if self.beat else []), *self.workers, *self.webs]:
            service.stop()


def start_shape(args, n: int, m: int, envs, work: Path) -> Shape:
    shape = Shape()
    try:
        for i in range(n):
            log = work / f"web{i}.log"
            shape.webs.append(
                WebServer(envs(f"web{i}"), log, workers=args.web_workers, threads=args.threads)
            )
        for i in range(m):
            log = work / f"worker{i}.log"
            shape.workers.append(WorkerProcess(env=envs(f"worker{i}"), log=log, whole_env=True))
        beat = [*"-m celery -A memoryhub beat -l INFO --scheduler".split(), BEAT_SCHEDULER]
        shape.beat = ProcessGroup(
            [sys.executable, *beat], env=envs("beat"), log=work / "beat.log", cwd=work
        )
        for w in shape.workers:  # tasks queued before a worker is up would flatter its rate
            wait_for(lambda w=w: " ready." in w.log.read_text(errors="replace"), 90, "worker")
    except BaseException:
        shape.stop()
        raise
    return shape


def load(args, shape: Shape, keys: list[str], url: str) -> dict:
    """The soak's clients for --seconds over every web process; counts, drain, replica."""
    bases = tuple(w.base + "/api/v1" for w in shape.webs)
    apis = [RoundRobinApi(base=bases[0], key=k, timeout=60, bases=bases) for k in keys]
    pairs = []
    for n in range(args.writers):
        status, body, _ = apis[n % len(apis)].call("POST", "/sessions", {"key": f"soak-{n}"})
        assert status == 201, (status, body)
        pairs.append((apis[n % len(apis)], body["id"]))
    rec, stop, samples = Record(), threading.Event(), []
    threads = [threading.Thread(target=writer, args=(a, s, n, rec, stop))
               for n, (a, s) in enumerate(pairs)]  # fmt: skip
    threads += [threading.Thread(target=searcher, args=(apis[n % len(apis)], n, rec, stop))
                for n in range(args.searchers)]  # fmt: skip
    threads += [threading.Thread(target=contexter, args=(pairs, n, rec, stop))
                for n in range(args.contexts)]  # fmt: skip
    threads.append(threading.Thread(target=sampler, args=(url, samples, stop)))
    began = time.monotonic()
    try:
        for t in threads:
            t.start()
        time.sleep(args.seconds)  # the load itself: a fixed duration, not a synchronisation
    finally:
        stop.set()
        for t in threads:
            t.join(120)
    elapsed = time.monotonic() - began
    embedded_at_stop = int(psql(url, SAMPLE_SQL)[0][0])
    rows, distinct, present = count_messages(url)
    left, drained = drain_embeddings(url, args.drain_seconds)
    return {"rec": rec, "elapsed": elapsed, "rows": rows, "distinct": distinct,
            "present": present, "embedded_at_stop": embedded_at_stop, "left": left,
            "drain": drained, "samples": samples, "load_end": os.getloadavg()[0],
            "server_log_errors": sum(log_errors(w.log_tail(10**8)) for w in shape.webs),
            "worker_log_errors": sum(log_errors(w.log.read_text(errors="replace"))
                                     for w in shape.workers),
            }  # fmt: skip


def log_errors(text: str) -> int:
    return text.count("Internal Server Error") + text.count("Traceback")


def replica_catch_up(url: str, replica_url: str, rows: int) -> tuple[int, float]:
    """Seconds until the replica holds all `rows` soak messages (bounded): (rows, seconds)."""
    start, sql = time.monotonic(), "SELECT count(*) FROM conversations_message"
    while True:
        have = int(psql(replica_url, sql + " WHERE content LIKE 'soak %'")[0][0])
        if have >= rows or time.monotonic() - start > 60:
            return have, time.monotonic() - start
        time.sleep(0.5)


def database_urls(cluster: dict, db: str) -> tuple[str, str]:
    """`db` on the primary and on the replica."""
    primary, replica = cluster["primary"], cluster["replica"]
    return primary.url().rsplit("/", 1)[0] + "/" + db, replica.url().rsplit("/", 1)[0] + "/" + db


def shape_env(cluster: dict, db: str, data_dir: Path) -> dict[str, str]:
    """A process's environment on database `db`: its own data dir, one machine per process."""
    url, replica_url = database_urls(cluster, db)
    redis = cluster["redis"]
    return service_env(
        data_dir, DATABASE_URL=url, DATABASE_REPLICA_URL=replica_url,
        CELERY_BROKER_URL=redis.url(0), CACHE_URL=redis.url(1),
        MEMORYHUB_EMBEDDING_URL=cluster["embeddings"], MEMORYHUB_EMBEDDING_MODEL="soak-hash",
        DJANGO_SECRET_KEY="cluster-bench-" + "x" * 40,
    )  # fmt: skip


def prepare_template(args, cluster: dict, work: Path) -> list[str]:
    """Migrate once into a template database with --agents agents: each shape starts from a
    copy (CREATE DATABASE ... TEMPLATE), fresh and in seconds. The agents' API keys."""
    psql(cluster["primary"].url(), f"CREATE DATABASE {TEMPLATE}")
    url, _ = database_urls(cluster, TEMPLATE)
    psql(url, "CREATE EXTENSION IF NOT EXISTS vector")  # pgvector from the system's PG lib
    env = shape_env(cluster, TEMPLATE, work / "setup")
    migrate(env)
    return [create_agent(env, f"cluster-{a}") for a in range(args.agents)]


def embedder_texts(url: str) -> int:
    """Texts the embeddings server has embedded since it started."""
    return int(fetch("GET", url + "/stats", timeout=30).json()["texts"])


def run_shape(args, index: int, shape: tuple[int, int], cluster: dict, work: Path) -> dict:
    """(N, M) on a fresh copy of the template and an empty Redis; all stopped on return."""
    (n, m), db = shape, f"memoryhub_{index}_n{shape[0]}m{shape[1]}"
    psql(cluster["primary"].url(), f"CREATE DATABASE {db} TEMPLATE {TEMPLATE}")
    url, replica_url = database_urls(cluster, db)
    cluster["redis"].command("FLUSHALL")  # the broker's queues and the cache: nothing left
    shape_dir = work / db
    shape_dir.mkdir()
    size0 = int(psql(url, "SELECT pg_database_size(current_database())")[0][0])
    texts0, began = embedder_texts(cluster["embeddings"]), time.monotonic()
    services = start_shape(args, n, m, lambda name: shape_env(cluster, db, shape_dir / name),
                           shape_dir)  # fmt: skip
    print(f"({n}, {m}): {n} web, {m} workers and beat up in {time.monotonic() - began:.0f} s "
          f"on database {db}", flush=True)  # fmt: skip
    try:
        r = load(args, services, cluster["keys"], url)
    finally:
        services.stop()
    r["replica_rows"], r["replica_seconds"] = replica_catch_up(url, replica_url, r["rows"])
    r["size"] = int(psql(url, "SELECT pg_database_size(current_database())")[0][0])
    r["size0"], r["n"], r["m"] = size0, n, m
    r["embedder_texts"] = embedder_texts(cluster["embeddings"]) - texts0
    return r


def run(args, work: Path) -> list[dict]:
    # Each created before it starts, so the finally stops (and deletes) a half-started one.
    primary, replica, redis = PostgresCluster(fsync=True), Replica(fsync=True), RedisServer(work)
    embeddings, began = None, time.monotonic()
    try:
        start_primary(primary)
        replica.follow(primary)
        redis.start()
        embeddings, embeddings_url = start_embeddings(work, args.embed_ms_per_text)
        cluster = {"primary": primary, "replica": replica, "redis": redis,
                   "embeddings": embeddings_url}  # fmt: skip
        cluster["keys"] = prepare_template(args, cluster, work)
        print(f"PostgreSQL primary :{primary.port}, streaming replica :{replica.port}, Redis "
              f":{redis.port}, embeddings {embeddings_url}, template migrated: "
              f"{time.monotonic() - began:.0f} s", flush=True)  # fmt: skip
        results = []
        for index, shape in enumerate(args.shapes):
            results.append(run_shape(args, index, shape, cluster, work))
            report_shape(args, results[-1])
        return results
    finally:
        if embeddings is not None:
            embeddings.stop()
        redis.stop()
        replica.destroy()
        primary.destroy()


def shapes(text: str) -> list[tuple[int, int]]:
    """Parse --shapes: 1x1,2x2,2x4 -> [(1, 1), (2, 2), (2, 4)]."""
    pairs = [tuple(int(x) for x in part.split("x")) for part in text.split(",") if part]
    if not pairs or any(len(p) != 2 or min(p) < 1 for p in pairs):
        raise argparse.ArgumentTypeError(f"shapes look like 1x1,2x2,2x4, not {text!r}")
    return [(p[0], p[1]) for p in pairs]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--shapes",
        type=shapes,
        default=[(1, 1), (2, 2), (2, 4)],
        help="(web processes)x(workers), comma-separated: 1x1,2x2,2x4",
    )
    parser.add_argument("--seconds", type=float, default=120, help="load per shape")
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--searchers", type=int, default=4)
    parser.add_argument("--contexts", type=int, default=2, help="get_context reader threads")
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn workers per web")
    parser.add_argument("--threads", type=int, default=8, help="threads per gunicorn worker")
    parser.add_argument("--drain-seconds", type=float, default=120)
    parser.add_argument(
        "--embed-ms-per-text",
        type=float,
        default=0.0,
        help="the embeddings server sleeps this many ms per text of a request (0: at once)",
    )
    parser.add_argument("--keep", default="", help="a directory to keep the logs in")
    parser.add_argument("--serve-embeddings", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()  # fmt: skip
    if min(args.agents, args.writers, args.web_workers, args.threads) < 1:
        parser.error("--agents, --writers, --web-workers and --threads need at least 1")
    if args.embed_ms_per_text < 0:
        parser.error("--embed-ms-per-text cannot be negative")
    if args.serve_embeddings:
        return serve_embeddings(args.serve_embeddings, args.embed_ms_per_text)
    # SIGTERM (a CI timeout, kill) unwinds like Ctrl-C: every finally stops its processes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        return summary(args, run(args, Path(args.keep)))
    with tempfile.TemporaryDirectory(prefix="memoryhub-cluster-") as work:
        results = run(args, Path(work))
    return summary(args, results)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # every process and temporary directory is gone by now
        print("interrupted", file=sys.stderr)
        sys.exit(130)
