"""Append throughput through the HTTP API of a running server.

    python bench/ingest.py --url http://127.0.0.1:8000 --key mh_… [--messages 20000]

Reports messages/second for single-message appends and for batches, using a few
concurrent client threads (several agents' sessions at once, as in real use).
"""

import argparse
import random
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _http import Api, percentile

WORDS = (
    "the a we I you deploy server cat coffee meeting tomorrow weekly review bug fix release "
    "postgres redis memory search vector embedding agent user assistant tool call error retry "
    "Berlin Tokyo travel plan budget invoice customer ticket urgent later yesterday dinner"
).split()


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))


def run(api: Api, *, total: int, batch: int, threads: int) -> dict:
    sessions = []
    for _ in range(threads):
        status, body, _ = api.call("POST", "/sessions", {"key": f"bench-{uuid.uuid4().hex[:8]}"})
        assert status == 201, body
        sessions.append(body["id"])
    per_thread = total // threads
    latencies: list[float] = []

    def worker(i: int) -> int:
        rng = random.Random(i)
        done = 0
        while done < per_thread:
            n = min(batch, per_thread - done)
            messages = [
                {"role": rng.choice(["user", "assistant"]), "content": text(rng)} for _ in range(n)
            ]
            status, body, elapsed = api.call(
                "POST", f"/sessions/{sessions[i]}/messages", {"messages": messages}
            )
            assert status == 201, (status, body)
            latencies.append(elapsed)
            done += n
        return done

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        stored = sum(pool.map(worker, range(threads)))
    elapsed = time.perf_counter() - start
    return {
        "batch": batch,
        "threads": threads,
        "messages": stored,
        "seconds": round(elapsed, 2),
        "msg_per_s": round(stored / elapsed),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 95) * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--key", required=True)
    parser.add_argument("--messages", type=int, default=20000, help="messages per batched run")
    parser.add_argument("--single", type=int, default=2000, help="messages in the single run")
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    api = Api(base=args.url.rstrip("/") + "/api/v1", key=args.key)
    rows = [
        run(api, total=args.single, batch=1, threads=args.threads),
        run(api, total=args.messages, batch=100, threads=args.threads),
        run(api, total=args.messages, batch=500, threads=args.threads),
    ]
    print("| batch | threads | messages | seconds | msg/s | request p50 ms | request p95 ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['batch']} | {r['threads']} | {r['messages']} | {r['seconds']} | "
            f"{r['msg_per_s']} | {r['p50_ms']} | {r['p95_ms']} |"
        )


if __name__ == "__main__":
    main()
