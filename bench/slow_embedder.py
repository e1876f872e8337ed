"""Appends stay fast while `/memory/save` waits on a slow embeddings endpoint (SQLite).

    .venv/bin/python bench/slow_embedder.py [--delay 3] [--saves 2] [--appends 20]

Self-contained: starts a slow OpenAI-compatible embeddings server on 127.0.0.1 (each
`POST /v1/embeddings` sleeps `--delay` seconds, then answers HashEmbedder vectors), then
this tree's web server (gunicorn, one worker with `--threads` threads) on a free port with a
fresh data dir (embedded default: SQLite, filesystem broker, file cache; no Celery worker,
so background embedding tasks only queue), migrates it and creates an agent.

Measured: `--saves` concurrent `POST /memory/save` calls (different content, each waiting
~delay s for its embedding) and, from `--append-after` s after they start, `--appends`
sequential one-message appends to one session from another thread. Prints per-append
p50 / p95 / max, each save's duration, and PASS/FAIL against `--max-append-seconds`
(exit status 1 on FAIL). A warm-up append and save before the measurement load the code and
create the fact category, so each measured save makes one embedding call; `--no-warmup`
skips them (cold server; the first save then also embeds the new category's name).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _http import Api, manage, percentile, start_gunicorn, wait_healthy  # noqa: E402
from django.conf import settings  # noqa: E402

from apps.providers.embeddings.fake import HashEmbedder  # noqa: E402

# HashEmbedder consults the provider guard setting; this process has no database.
if not settings.configured:
    settings.configure(MEMORYHUB_PROVIDER_GUARD="off")

MODEL = "slow-bench"
SAVE_TEXTS = [
    "The user's cat is called Miso and hates thunderstorms",
    "Deploy the billing service only on Tuesdays after the weekly review",
    "Invoices for the Tokyo customer go out in yen, net thirty days",
    "Prefers green tea without sugar during long debugging sessions",
    "The staging Postgres password rotates on the first of each month",
    "Dinner with Anna in Berlin is booked for Friday at eight",
    "Retry flaky vector search tests at most twice before filing a ticket",
    "The budget for the travel plan is capped at two thousand euros",
]
# Env vars that would point the server at another deployment than a fresh embedded one.
CLEARED = (
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "DATABASE_REPLICA_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
)


class SlowEmbeddings(ThreadingHTTPServer):
    """Each request sleeps `delay` + `per_text` x its texts (no CPU: a remote model or GPU
    stands in), one thread per request so concurrent callers overlap."""

    daemon_threads = True

    def __init__(self, delay: float, per_text: float = 0.0) -> None:
        super().__init__(("127.0.0.1", 0), EmbeddingsHandler)
        self.delay = delay
        self.per_text = per_text
        self.embedder = HashEmbedder(dimensions=384)
        self.calls: list[tuple[float, float, int]] = []  # (start, end, texts), perf_counter
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class EmbeddingsHandler(BaseHTTPRequestHandler):
    server: SlowEmbeddings

    def do_GET(self) -> None:
        """`/v1/stats`: calls answered and texts embedded so far (for a server in another
        process)."""
        if self.path.rstrip("/") != "/v1/stats":
            return self._answer(404, {"error": {"message": f"no route {self.path}"}})
        with self.server.lock:
            calls = list(self.server.calls)
        self._answer(200, {"calls": len(calls), "texts": sum(c[2] for c in calls)})

    def do_POST(self) -> None:
        start = time.perf_counter()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != "/v1/embeddings":
            return self._answer(404, {"error": {"message": f"no route {self.path}"}})
        try:
            payload = json.loads(body)
            texts = payload["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
        except (ValueError, KeyError, TypeError) as exc:
            return self._answer(400, {"error": {"message": f"bad request: {exc}"}})
        time.sleep(self.server.delay + self.server.per_text * len(texts))
        vectors = self.server.embedder.embed(texts)
        self._answer(
            200,
            {
                "object": "list",
                "data": [
                    {"object": "embedding", "index": i, "embedding": v}
                    for i, v in enumerate(vectors)
                ],
                "model": payload.get("model", MODEL),
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            },
        )
        with self.server.lock:
            self.server.calls.append((start, time.perf_counter(), len(texts)))

    def _answer(self, status: int, body: dict) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args) -> None:  # quiet
        pass


def server_env(data_dir: str, embedding_url: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in CLEARED and not k.startswith("MEMORYHUB_")
    }
    env.update(
        MEMORYHUB_DATA_DIR=data_dir,
        MEMORYHUB_EMBEDDING_URL=embedding_url,
        MEMORYHUB_EMBEDDING_MODEL=MODEL,
        MEMORYHUB_EMBEDDING_TIMEOUT="30",
        PYTHONPATH=str(ROOT),  # this tree's code, whatever the venv's site-packages hold
    )
    return env


def measure(api: Api, session: str, *, saves: int, appends: int, append_after: float) -> dict:
    t0 = time.perf_counter()
    save_rows: list[dict] = []
    append_rows: list[dict] = []
    lock = threading.Lock()

    def save(i: int) -> None:
        start = time.perf_counter()
        content = f"{SAVE_TEXTS[(i + 1) % len(SAVE_TEXTS)]} (bench {i})"
        status, body, elapsed = api.call("POST", "/memory/save", {"content": content})
        with lock:
            save_rows.append(
                {
                    "i": i,
                    "status": status,
                    "action": (body or {}).get("action"),
                    "start": start - t0,
                    "end": start - t0 + elapsed,
                    "seconds": elapsed,
                    "error": None if status == 200 else body,
                }
            )

    def append_loop() -> None:
        time.sleep(append_after)
        for n in range(appends):
            start = time.perf_counter()
            status, body, elapsed = api.call(
                "POST",
                f"/sessions/{session}/messages",
                {"messages": [{"role": "user", "content": f"append {n} while saves embed"}]},
            )
            append_rows.append(
                {
                    "status": status,
                    "start": start - t0,
                    "end": start - t0 + elapsed,
                    "seconds": elapsed,
                    "error": None if status == 201 else body,
                }
            )

    threads = [threading.Thread(target=save, args=(i,)) for i in range(saves)]
    threads.append(threading.Thread(target=append_loop))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"saves": sorted(save_rows, key=lambda r: r["i"]), "appends": append_rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=3.0, help="embeddings answer after (s)")
    parser.add_argument("--saves", type=int, default=2, help="concurrent /memory/save calls")
    parser.add_argument("--appends", type=int, default=20, help="sequential one-message appends")
    parser.add_argument("--append-after", type=float, default=0.3, help="appends start (s)")
    parser.add_argument("--max-append-seconds", type=float, default=1.5)
    parser.add_argument("--threads", type=int, default=8, help="gunicorn threads (one worker)")
    parser.add_argument("--no-warmup", action="store_true", help="measure a cold server")
    args = parser.parse_args()

    embeddings = SlowEmbeddings(args.delay)
    threading.Thread(target=embeddings.serve_forever, daemon=True).start()
    proc: subprocess.Popen | None = None
    with tempfile.TemporaryDirectory(prefix="mh-bench-slow-") as data_dir:
        log_path = Path(data_dir) / "web.log"
        try:
            env = server_env(data_dir, embeddings.url)
            manage(env, "migrate", "--noinput")
            key = manage(env, "create_agent", "slow-bench").strip().splitlines()[-1]
            with open(log_path, "w") as log:
                proc, base = start_gunicorn(env, log, threads=args.threads)
            health = wait_healthy(base, proc)
            api = Api(base=base + "/api/v1", key=key)

            status, body, _ = api.call("POST", "/sessions", {"key": "slow-bench"})
            assert status == 201, (status, body)
            session = body["id"]
            warm = None
            if not args.no_warmup:
                status, body, _ = api.call(
                    "POST",
                    f"/sessions/{session}/messages",
                    {"messages": [{"role": "user", "content": "warm-up"}]},
                )
                assert status == 201, (status, body)
                status, body, warm = api.call("POST", "/memory/save", {"content": SAVE_TEXTS[0]})
                assert status == 200, (status, body)
            warm_calls = len(embeddings.calls)

            result = measure(
                api,
                session,
                saves=args.saves,
                appends=args.appends,
                append_after=args.append_after,
            )
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
            embeddings.shutdown()
            embeddings.server_close()
        guard_warnings = log_path.read_text().count("called inside")

    saves, appends = result["saves"], result["appends"]
    seconds = [r["seconds"] for r in appends]
    last_save_end = max((r["end"] for r in saves), default=0.0)
    overlapped = sum(1 for r in appends if r["start"] < last_save_end)
    failed = [r for r in saves + appends if r["error"] is not None]
    slowest = max(seconds, default=float("nan"))

    print(f"tree: {ROOT}")
    print(
        f"server: gunicorn, 1 worker x {args.threads} threads, SQLite; /healthz {health}; "
        f"embeddings delay {args.delay:.1f} s"
    )
    if warm is None:
        print("warm-up: none (--no-warmup)")
    else:
        print(f"warm-up save: {warm:.2f} s ({warm_calls} embedding calls)")
    print(f"embedding calls during the measurement: {len(embeddings.calls) - warm_calls}")
    for r in saves:
        print(
            f"save {r['i']}: {r['seconds']:.2f} s (HTTP {r['status']}, {r['action']}, "
            f"{r['start']:.2f} -> {r['end']:.2f} s)"
        )
    print(
        f"appends: {len(appends)}, one message each, from {appends[0]['start']:.2f} s "
        f"to {appends[-1]['end']:.2f} s; {overlapped} started while a save was in flight"
    )
    print(
        f"append latency: p50 {percentile(seconds, 50):.3f} s, "
        f"p95 {percentile(seconds, 95):.3f} s, max {slowest:.3f} s"
    )
    print("append latencies (s): " + " ".join(f"{s:.2f}" for s in seconds))
    if guard_warnings:
        print(f"server log: {guard_warnings} 'provider called inside a transaction' warnings")

    problems = []
    if failed:
        problems.append(f"{len(failed)} requests failed: {failed[0]['error']}")
    if overlapped == 0:
        problems.append("no append ran while a save was in flight (measurement invalid)")
    if not slowest < args.max_append_seconds:
        problems.append(f"slowest append {slowest:.2f} s >= {args.max_append_seconds} s")
    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print(f"PASS: every append under {args.max_append_seconds} s (max {slowest:.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
