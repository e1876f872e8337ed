"""The latency of one memory_recall through MCP (streamable HTTP at /mcp) and through
POST /api/v1/memory/recall, side by side, against a real server on loopback.

    .venv/bin/python bench/mcp_latency.py [--calls 200] [--facts 200] [--fresh 50]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/memoryhub_m2_bench \\
        .venv/bin/python bench/mcp_latency.py          # PostgreSQL (the database must exist)

Self-contained: starts this tree's web server (gunicorn, 1 worker x 8 threads, as `make run`
serves) on a free port with a fresh data dir (SQLite unless DATABASE_URL is set; filesystem
broker and file cache, no Celery worker), migrates, creates the agent "bench-mcp-<time>" and saves
--facts facts through the API. Every variant is warmed up, then timed over --calls calls of
memory_recall with the same rotating queries:

- api: POST /api/v1/memory/recall with httpx2 (one keep-alive connection, as the SDK has);
- mcp: one SDK `Client` session, initialized once and reused (tools/call per call);
- mcp raw: the same tools/call as one hand-made JSON-RPC POST with httpx2 (the server's
  share: no SDK client);

these three in turn, call by call, so load drift hits them alike; then
- mcp fresh: a new SDK `Client` per call (connect, version negotiation, call, close),
  over --fresh calls.

The server embeds with its default, the offline MiniLM, as a deployment does.
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from _http import manage, start_gunicorn, wait_healthy
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent

QUERIES = [
    "What is the user's cat called?",
    "When is the budget review?",
    "Which tea does the user like?",
    "Where is the dinner booked?",
    "How are invoices for Tokyo paid?",
]
FACTS = [
    "The user's cat is called Whiskerino",
    "The quarterly budget review is on Monday",
    "The user prefers green tea without sugar",
    "Dinner with Anna in Berlin is booked for Friday at eight",
    "Invoices for the Tokyo customer go out in yen, net thirty days",
    "Deploy the billing service only on Tuesdays",
    "The staging password rotates on the first of each month",
    "Retry flaky vector search tests at most twice",
]
CLEARED = ("DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL", "CACHE_URL")


def server_env(data_dir: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in CLEARED and not k.startswith("MEMORYHUB_")
    }
    env.update(MEMORYHUB_DATA_DIR=data_dir, PYTHONPATH=str(ROOT))
    return env


def summary(label: str, ms: list[float]) -> str:
    ordered = sorted(ms)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return (
        f"{label:<34} n={len(ms):<4} p50 {statistics.median(ordered):7.2f} ms   "
        f"p95 {p95:7.2f} ms   mean {statistics.fmean(ordered):7.2f} ms"
    )


def _rpc(i: int) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": "memory_recall", "arguments": {"query": QUERIES[i % 5]}},
    }


def _client(url: str, key: str) -> tuple[Client, httpx2.AsyncClient]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), cache=None), http


async def time_interleaved(base: str, key: str, calls: int, warmup: int) -> dict:
    """Call i goes to each variant in turn (api, mcp, raw), so load drift hits all three."""
    auth = {"Authorization": f"Bearer {key}"}
    raw_headers = {
        **auth,
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    timings: dict[str, list[float]] = {"api": [], "mcp": [], "raw": []}
    client, mcp_http = _client(f"{base}/mcp", key)
    api_http = httpx2.AsyncClient(base_url=base, headers=auth, timeout=60)
    raw_http = httpx2.AsyncClient(base_url=base, headers=raw_headers, timeout=60)
    async with mcp_http, client, api_http, raw_http:
        for i in range(warmup + calls):
            t0 = time.perf_counter()
            response = await api_http.post("/api/v1/memory/recall", json={"query": QUERIES[i % 5]})
            t1 = time.perf_counter()
            result = await client.call_tool("memory_recall", {"query": QUERIES[i % 5]})
            t2 = time.perf_counter()
            raw = await raw_http.post("/mcp", json=_rpc(i))
            t3 = time.perf_counter()
            assert response.status_code == 200, response.text
            assert result.is_error is False, result.content
            assert raw.status_code == 200, raw.text
            assert raw.json()["result"]["isError"] is False, raw.text
            if i >= warmup:
                timings["api"].append((t1 - t0) * 1000)
                timings["mcp"].append((t2 - t1) * 1000)
                timings["raw"].append((t3 - t2) * 1000)
    return timings


async def time_mcp_fresh(url: str, key: str, calls: int, warmup: int) -> list[float]:
    timings = []
    for i in range(warmup + calls):
        t0 = time.perf_counter()
        client, http = _client(url, key)
        async with http, client:
            result = await client.call_tool("memory_recall", {"query": QUERIES[i % 5]})
        elapsed = (time.perf_counter() - t0) * 1000
        assert result.is_error is False, result.content
        if i >= warmup:
            timings.append(elapsed)
    return timings


def load(base: str, key: str, facts: int) -> None:
    with httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}) as http:
        for i in range(facts):
            text = FACTS[i % len(FACTS)] + ("" if i < len(FACTS) else f" (note {i})")
            response = http.post("/api/v1/memory/save", json={"content": text}, timeout=120)
            assert response.status_code == 200, response.text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--fresh", type=int, default=50, help="calls with a new MCP client")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8, help="gunicorn threads (one worker)")
    args = parser.parse_args()

    proc: subprocess.Popen | None = None
    with tempfile.TemporaryDirectory(prefix="mh-bench-mcp-") as data_dir:
        log_path = Path(data_dir) / "web.log"
        try:
            env = server_env(data_dir)
            manage(env, "migrate", "--noinput")
            # A new agent each run: a reused PostgreSQL database keeps the earlier ones.
            slug = f"bench-mcp-{int(time.time())}"
            key = manage(env, "create_agent", slug).strip().splitlines()[-1]
            with open(log_path, "w") as log:
                proc, base = start_gunicorn(env, log, threads=args.threads)
            wait_healthy(base, proc)
            t0 = time.perf_counter()
            load(base, key, args.facts)
            print(f"saved {args.facts} facts in {time.perf_counter() - t0:.1f} s")

            timings = asyncio.run(time_interleaved(base, key, args.calls, args.warmup))
            fresh_ms = asyncio.run(time_mcp_fresh(f"{base}/mcp", key, args.fresh, 5))
        except BaseException:
            if log_path.exists():
                print(f"--- web server log ({log_path}) ---", file=sys.stderr)
                print(log_path.read_text()[-4000:], file=sys.stderr)
            raise
        finally:
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

    vendor = "PostgreSQL" if "postgres" in os.environ.get("DATABASE_URL", "") else "SQLite"
    print(
        f"server: gunicorn 1 worker x {args.threads} threads, {vendor}, "
        f"embedder MiniLM; {args.facts} facts; "
        f"warm-up {args.warmup} calls each"
    )
    print(summary("api  POST /api/v1/memory/recall", timings["api"]))
    print(summary("mcp  tools/call, one SDK session", timings["mcp"]))
    print(summary("mcp  raw JSON-RPC POST, no SDK", timings["raw"]))
    print(summary("mcp  new SDK client per call", fresh_ms))
    delta = statistics.median(timings["mcp"]) - statistics.median(timings["api"])
    print(f"MCP overhead at p50 (one SDK session): {delta:+.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
