"""Search latency at scale: loads N synthetic messages for one agent (or, with --agents A,
N / A for each of A agents, each query against a random one of them), times every mode.

Texts are real LoCoMo turns re-spoken by 200 speakers with extra words drawn from the
corpus vocabulary; vectors are the MiniLM vectors of the source turns plus Gaussian noise
(cosine ~0.9 to the source), so neighbourhoods look like real ones; token states (for the
reranking stage) are the source turns' own. Queries are LoCoMo
questions embedded at query time by the configured (MiniLM) embedder: latencies include the
query embedding, the search and the context windows (the search selector, in-process).

The script migrates the database itself. PostgreSQL is measured in two states: right after
the load (ANALYZE only, no VACUUM: a fresh visibility map is not something a store with
constant appends has), then after `VACUUM ANALYZE` of the conversations tables. SQLite is
measured once, after `database_optimize` (PRAGMA optimize, the hourly beat task). Each
state's figure is the median over --runs passes of each pass's p50 and p95.

    createdb -h 127.0.0.1 -U postgres mh_bench_scale
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mh_bench_scale \\
    MEMORYHUB_DATA_DIR=/tmp/mh-bench-scale \\
        .venv/bin/python bench/search_scale.py --messages 100000 --out var/search_scale.json

Many agents (issue 29): `--messages 100000 --agents 100` and `--messages 1000000 --agents
1000` hold 1,000 messages per agent; per-agent latency must not grow with the total. The
sizes of the messages table, its indexes and the BM25 side tables are printed and kept in
the run's record.
"""

import os

# As memoryhub/__init__.py does for the server, before numpy is imported here.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared/bench/locomo/locomo-dev.json"
NAMES = [
    f"{a}{b}"
    for a in "Al Be Ca Da El Fa Go Ha Iv Jo".split()
    for b in "ex la rin mon sy ton vi dra ko nie bert na ric ssa to ly da mir za us".split()
]
# hybrid_fused: hybrid with the agent's reranking off (RRF + smoothing alone), to show what
# the rerank stage costs.
MODES = ("hybrid", "hybrid_fused", "semantic", "keyword_bm25", "contains")
API_MODES = {"keyword_bm25": "keyword", "hybrid_fused": "hybrid"}
ARCHIVE_CUTOFF = datetime(2100, 1, 1, tzinfo=UTC)  # every message is archive (compacted)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--messages", type=int, default=100_000)
    p.add_argument("--session-size", type=int, default=200)
    p.add_argument("--queries", type=int, default=300, help="timed queries per pass and mode")
    p.add_argument(
        "--mode-queries", default="", help="per-mode override, e.g. keyword_bm25=50,contains=50"
    )
    p.add_argument("--runs", type=int, default=5, help="passes per state and mode (median)")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument(
        "--states",
        default="",
        help="PostgreSQL: load,vacuum (default both); SQLite: optimize (the only one)",
    )
    p.add_argument("--agent", default="scale-bench")
    p.add_argument(
        "--agents",
        type=int,
        default=1,
        help="spread --messages over this many agents (<agent>-0, -1, ...); each timed "
        "query goes to a random one of them",
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--data", type=Path, default=DATA, help=f"LoCoMo JSON (default {DATA})")
    p.add_argument("--load-only", action="store_true", help="load (and index) only, no queries")
    p.add_argument("--out", type=Path, help="merge the results into this JSON file")
    args = p.parse_args()
    if not args.data.is_file():
        p.error(f"LoCoMo data not found at {args.data}: pass --data PATH/locomo-dev.json")
    if not os.environ.get("MEMORYHUB_DATA_DIR"):
        p.error("set MEMORYHUB_DATA_DIR to a folder of its own (the default is the real store)")
    if args.agents < 1 or args.messages % args.agents:
        p.error("--messages must be a multiple of --agents")
    args.per_mode = dict.fromkeys(args.modes.split(","), args.queries)
    for item in filter(None, args.mode_queries.split(",")):
        mode, _, n = item.partition("=")
        if mode not in args.per_mode:
            p.error(f"--mode-queries names {mode!r}, which is not in --modes")
        args.per_mode[mode] = int(n)
    unknown = set(args.per_mode) - set(MODES)
    if unknown:
        p.error(f"unknown modes {sorted(unknown)}; choose from {', '.join(MODES)}")
    return args


ARGS = parse_args() if __name__ == "__main__" else None
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from apps.agents.models import Agent, Team  # noqa: E402
from apps.agents.services import agent_update_settings  # noqa: E402
from apps.agents.users import AGENT_ONLY  # noqa: E402
from apps.conversations.models import Message, MessageTokens, Session, SessionMeta  # noqa: E402
from apps.conversations.selectors import message_search  # noqa: E402
from apps.core.services import database_optimize  # noqa: E402
from apps.providers.embeddings import get_embedder, vector_label  # noqa: E402
from apps.search.backends.base import hnsw_index  # noqa: E402

HNSW = hnsw_index("conversations_message", "embedding")


@dataclass
class Pass:
    load1: float  # the 1-minute load average just before the pass
    p50_ms: float
    p95_ms: float
    mean_hits: float


@dataclass
class Result:
    backend: str
    messages: int  # in all, over `agents` agents
    mode: str
    state: str
    queries: int
    p50_ms: float  # median over the passes of each pass's p50
    p95_ms: float  # median over the passes of each pass's p95
    passes: list[Pass]
    table_state: dict = field(default_factory=dict)
    agents: int = 1


def load_locomo(path: Path) -> tuple[list[str], list[str]]:
    """(every turn's text, every category 1-4 question) of the LoCoMo file."""
    samples = json.loads(path.read_text())
    turns = [
        t["text"]
        for s in samples
        for key, value in s["conversation"].items()
        if key.startswith("session_") and isinstance(value, list)
        for t in value
    ]
    questions = [
        qa["question"] for s in samples for qa in s["qa"] if qa.get("category") in (1, 2, 3, 4)
    ]
    return turns, questions


def check_embedder() -> str:
    """The query embedder's name; refuse the tests' hashing embedder (no model cost)."""
    embedder = get_embedder()
    name = f"{type(embedder).__module__}.{type(embedder).__name__}"
    if ".fake" in name:
        raise SystemExit(f"{name} is a test embedder: run with the base settings (MiniLM)")
    embedder.embed(["warm up"])
    return f"{name} ({vector_label(embedder)})"


def load(agents: list[Agent], turns: list[str], n: int, session_size: int, seed: int) -> dict:
    """Load n messages, n / len(agents) per agent (HNSW built afterwards on PostgreSQL);
    return the phase timings."""
    embedder = get_embedder()
    print(f"embedding {len(turns)} source turns...", flush=True)
    found = embedder.embed_with_tokens(turns)  # MiniLM: vectors and token states, one run
    base = np.asarray([e.vector for e in found], dtype=np.float32)
    states = (embedder.token_space(), [e.codes for e in found])
    pg = connection.vendor == "postgresql"
    if pg:  # bulk loads are ~9x faster with HNSW built after
        with connection.cursor() as c:
            c.execute(f"DROP INDEX IF EXISTS {HNSW}")
    t0 = time.perf_counter()
    _insert_messages(agents, turns, base, states, n, session_size, seed)
    timings = {"load_s": round(time.perf_counter() - t0, 1)}
    print(f"loaded {n} in {timings['load_s']}s", flush=True)
    _compact_all(agents)
    if pg:
        t0 = time.perf_counter()
        with connection.cursor() as c:
            c.execute("SET maintenance_work_mem = '512MB'")
            c.execute(
                f"CREATE INDEX {HNSW} ON conversations_message "
                "USING hnsw (embedding vector_cosine_ops)"
            )
        timings["hnsw_s"] = round(time.perf_counter() - t0, 1)
        print(f"HNSW built in {timings['hnsw_s']}s", flush=True)
    t0 = time.perf_counter()
    _statistics()
    timings["analyze_s"] = round(time.perf_counter() - t0, 1)
    return timings


def _insert_messages(agents, turns, base, states, n: int, session_size: int, seed: int) -> None:
    """n messages in batches of 5,000 rows (the BM25 triggers are per statement): agent
    after agent, n / len(agents) each, in sessions of session_size."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    vocab = sorted({w for t in turns for w in t.split() if w.isalpha() and len(w) > 3})
    label = vector_label(get_embedder())
    start = datetime(2024, 1, 1, tzinfo=UTC)
    t0 = time.perf_counter()
    batch: list[Message] = []
    tokens: list[MessageTokens] = []
    space, codes = states
    session = None
    per_agent = n // len(agents)
    for i in range(n):
        agent, local = agents[i // per_agent], i % per_agent
        if local % session_size == 0:
            session = Session.objects.create(
                agent=agent, key=f"s{local // session_size}", created_at=start
            )
        j = rng.randrange(len(turns))
        extra = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 6)))
        vec = base[j] + nrng.normal(0, 0.025, 384).astype(np.float32)
        vec /= np.linalg.norm(vec)
        text = f"{turns[j]} {extra}".strip()
        pk = uuid.uuid4()
        tokens.append(
            MessageTokens(message_id=pk, space=space, count=len(codes[j]), codes=codes[j].tobytes())
        )
        batch.append(
            Message(
                id=pk,
                agent=agent,
                session=session,
                role="user",
                name=rng.choice(NAMES),
                content=text,
                byte_size=len(text.encode()),
                created_at=start + timedelta(minutes=i),
                embedding=vec,
                embedding_model=label,
            )
        )
        if len(batch) == 5000 or i == n - 1:
            with transaction.atomic():
                Message.objects.bulk_create(batch)
                MessageTokens.objects.bulk_create(tokens)
            batch, tokens = [], []
            print(f"  {i + 1} messages, {time.perf_counter() - t0:.0f}s", flush=True)


def _compact_all(agents: list[Agent]) -> None:
    """Make the whole history archive, so keyword mode runs BM25 over all of it.

    Done at load time so that every state measures the same rows; hybrid, semantic and
    contains ignore the cutoff.
    """
    missing = Session.objects.filter(agent__in=agents, meta__isnull=True)
    SessionMeta.objects.bulk_create(
        [SessionMeta(session=s, start_at=ARCHIVE_CUTOFF) for s in missing.only("id")],
        batch_size=1000,
    )


def _statistics() -> None:
    """Planner statistics only: ANALYZE on PostgreSQL, PRAGMA optimize on SQLite."""
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("ANALYZE")
    else:
        database_optimize()  # as the hourly core.optimize_database beat task does


def conversation_tables() -> list[str]:
    """Messages, sessions, session meta and the messages' BM25 side tables."""
    return sorted(
        t for t in connection.introspection.table_names() if t.startswith("conversations_")
    )


def table_state() -> dict:
    """PostgreSQL: per table, pages, all-visible pages, dead rows and the last (auto)vacuum."""
    if connection.vendor != "postgresql":
        return {}
    with connection.cursor() as c:
        c.execute(
            "SELECT c.relname, c.relpages, c.relallvisible, s.n_dead_tup, "
            "greatest(s.last_vacuum, s.last_autovacuum) FROM pg_class c "
            "JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.relname = ANY(%s)",
            [conversation_tables()],
        )
        return {
            name: {
                "pages": pages,
                "all_visible": vis,
                "dead_rows": dead,
                "last_vacuum": last.isoformat() if last else None,
            }
            for name, pages, vis, dead, last in c.fetchall()
        }


def vacuum_analyze() -> float:
    """VACUUM ANALYZE the conversations tables; return the seconds it took."""
    t0 = time.perf_counter()
    with connection.cursor() as c:
        for table in conversation_tables():
            c.execute(f'VACUUM ANALYZE "{table}"')
    return round(time.perf_counter() - t0, 1)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def time_pass(mode: str, queries: list[tuple[Agent, str]]) -> Pass:
    """One timed pass of `queries` (each for its agent) in `mode`, after reading the load
    average."""
    load1 = round(os.getloadavg()[0], 2)
    api_mode = API_MODES.get(mode, mode)
    times, found = [], []
    for agent, q in queries:
        t0 = time.perf_counter()
        result = message_search(agent=agent, query=q, mode=api_mode, k=10, audience=AGENT_ONLY)
        times.append((time.perf_counter() - t0) * 1000)
        found.append(len(result.hits))
    return Pass(
        load1=load1,
        p50_ms=round(pct(times, 0.5), 1),
        p95_ms=round(pct(times, 0.95), 1),
        mean_hits=round(statistics.fmean(found), 1),
    )


def measure(agents: list[Agent], state: str, questions: list[str], args, size: int) -> list[Result]:
    """Every mode in one state, after printing the tables' vacuum state."""
    tables = table_state()
    for name, t in tables.items():
        print(
            f"  {name}: {t['all_visible']}/{t['pages']} pages all-visible, "
            f"{t['dead_rows']} dead rows, last vacuum {t['last_vacuum']}"
        )
    results = []
    for mode, n in args.per_mode.items():
        rng = random.Random(args.seed)
        # Each question against a random agent: per-agent latency, whatever the agent count.
        picked = rng.sample(questions, min(n, len(questions)))
        queries = [(rng.choice(agents), q) for q in picked]
        passes = measure_mode(agents, state, mode, queries, args.runs)
        result = Result(
            backend=connection.vendor,
            messages=size,
            mode=mode,
            state=state,
            queries=len(queries),
            passes=passes,
            table_state=tables,
            p50_ms=round(statistics.median(p.p50_ms for p in passes), 1),
            p95_ms=round(statistics.median(p.p95_ms for p in passes), 1),
            agents=len(agents),
        )
        print(
            f"{state:8s} {mode:13s} median of {args.runs}: p50 {result.p50_ms:7.1f} ms  "
            f"p95 {result.p95_ms:7.1f} ms",
            flush=True,
        )
        results.append(result)
    return results


def measure_mode(
    agents: list[Agent], state: str, mode: str, queries: list[tuple[Agent, str]], runs: int
) -> list[Pass]:
    """5 untimed warm-up queries, then `runs` timed passes over `queries`."""
    api_mode = API_MODES.get(mode, mode)
    rerank = {"rerank": False if mode == "hybrid_fused" else None}
    for agent in {a.pk: a for a, _ in queries}.values():
        agent_update_settings(agent=agent, changes=rerank)
        agent.refresh_from_db()
    for agent, q in queries[:5]:
        message_search(agent=agent, query=q, mode=api_mode, k=10, audience=AGENT_ONLY)
    passes = []
    for run in range(1, runs + 1):
        one = time_pass(mode, queries)
        passes.append(one)
        print(
            f"{state:8s} {mode:13s} pass {run}  load {one.load1:4.2f}  "
            f"p50 {one.p50_ms:7.1f} ms  p95 {one.p95_ms:7.1f} ms  mean hits {one.mean_hits}",
            flush=True,
        )
    return passes


def states_for(args) -> list[str]:
    allowed = ["load", "vacuum"] if connection.vendor == "postgresql" else ["optimize"]
    states = args.states.split(",") if args.states else allowed
    if set(states) - set(allowed):
        raise SystemExit(f"--states on {connection.vendor}: choose from {', '.join(allowed)}")
    return [s for s in allowed if s in states]


def write_out(path: Path, results: list[Result], meta: dict) -> None:
    """Merge into `path`: a new result replaces the one for the same backend/size/mode/state."""
    doc = json.loads(path.read_text()) if path.exists() else {"results": [], "runs": []}
    keys = {(r.backend, r.messages, r.agents, r.mode, r.state) for r in results}
    doc["results"] = [
        r
        for r in doc["results"]
        if (r["backend"], r["messages"], r.get("agents", 1), r["mode"], r["state"]) not in keys
    ] + [asdict(r) | {"run": meta["started"]} for r in results]
    doc["runs"].append(meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"results merged into {path}")


def _commit() -> str:
    out = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


def main(args: argparse.Namespace) -> None:
    meta = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "argv": sys.argv[1:],
        "cpus": os.cpu_count(),
    }
    print("migrating...", flush=True)
    call_command("migrate", interactive=False, verbosity=0)
    meta["backend"] = connection.vendor
    meta["embedder"] = check_embedder()
    print(f"query embedding: {meta['embedder']}, inside every timed query")
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("SHOW autovacuum")
            meta["autovacuum"] = c.fetchone()[0]
        print(f"autovacuum: {meta['autovacuum']}")
    turns, questions = load_locomo(args.data)
    agents = bench_agents(args)
    have = Message.objects.filter(agent__in=agents).count()
    if have and have != args.messages:
        raise SystemExit(f"agents {args.agent}* have {have} messages; use a new --agent")
    if have:
        print(f"agents {args.agent}* already have {have} messages: reusing them")
        _compact_all(agents)  # agents loaded by older versions of this script
    else:
        meta["load"] = load(agents, turns, args.messages, args.session_size, args.seed)
    meta["sizes"] = relation_sizes()
    for name, size in meta["sizes"].items():
        print(f"  size {name}: {size / 2**20:,.1f} MiB")
    results = []
    if not args.load_only:
        results = run_states(agents, questions, args, meta)
    if args.out:
        write_out(args.out, results, meta)


def bench_agents(args) -> list[Agent]:
    """`--agent` alone, or `--agents` of them named <agent>-0, <agent>-1, ..."""
    team, _ = Team.objects.get_or_create(name="bench")
    slugs = [args.agent] if args.agents == 1 else [f"{args.agent}-{i}" for i in range(args.agents)]
    existing = {a.slug: a for a in Agent.objects.filter(slug__in=slugs)}
    Agent.objects.bulk_create([Agent(slug=s, team=team) for s in slugs if s not in existing])
    by_slug = {a.slug: a for a in Agent.objects.filter(slug__in=slugs)}
    return [by_slug[s] for s in slugs]


def relation_sizes() -> dict[str, int]:
    """PostgreSQL: bytes of the messages table's heap, each of its indexes (HNSW, trigram,
    btrees), and every other conversations_* table with its indexes and TOAST (the BM25
    side tables, token states)."""
    if connection.vendor != "postgresql":
        return {}
    with connection.cursor() as c:
        c.execute(
            "SELECT i.relname, pg_relation_size(i.oid) FROM pg_index x "
            "JOIN pg_class i ON i.oid = x.indexrelid "
            "WHERE x.indrelid = 'conversations_message'::regclass ORDER BY 2 DESC"
        )
        indexes = c.fetchall()
        c.execute(
            "SELECT pg_relation_size('conversations_message'), "
            "pg_total_relation_size('conversations_message')"
        )
        heap, total = c.fetchone()
        others = [t for t in conversation_tables() if t != "conversations_message"]
        c.execute(
            "SELECT relname, pg_total_relation_size(oid) FROM pg_class "
            "WHERE relname = ANY(%s) AND relkind = 'r' ORDER BY 2 DESC",
            [others],
        )
        tables = c.fetchall()
    return {
        "conversations_message (heap)": heap,
        **{f"index {name}": size for name, size in indexes},
        "conversations_message (total, with TOAST and indexes)": total,
        **{f"{name} (total)": size for name, size in tables},
    }


def run_states(agents: list[Agent], questions: list[str], args, meta: dict) -> list[Result]:
    """Measure each state in order; VACUUM ANALYZE comes between PostgreSQL's two."""
    results = []
    for state in states_for(args):
        if state == "vacuum":
            meta["vacuum_s"] = vacuum_analyze()
            print(f"VACUUM ANALYZE of {', '.join(conversation_tables())}: {meta['vacuum_s']}s")
        elif state == "load" and any(t["last_vacuum"] for t in table_state().values()):
            print("WARNING: these tables were vacuumed since the load; 'load' is not fresh")
        print(
            f"\n{connection.vendor}, {args.messages} messages over {len(agents)} agents, "
            f"state {state}, k=10, {args.runs} passes per mode",
            flush=True,
        )
        results += measure(agents, state, questions, args, args.messages)
    return results


if __name__ == "__main__":
    main(ARGS)
