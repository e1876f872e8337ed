"""The memory lifecycle on a real model: a LoCoMo dev conversation streamed through the API
while a real worker summarises, consolidates, flushes and compacts with that model.

    .venv/bin/python bench/real_llm.py --start [--threads 1]        # SmolLM2-135M, llama.cpp
    .venv/bin/python bench/real_llm.py --llm-url http://127.0.0.1:8080/v1 --model NAME \
        [--context-tokens 8192] [--structured auto|json_schema|json_object|prompt]
    common: [--conversation conv-26] [--sessions 6] [--settings '{"memory_window": 40}']

Self-contained on the embedded default: a fresh data dir (SQLite, filesystem broker, file
cache), this tree's web server (gunicorn, 1 worker x 4 threads) and a real Celery worker
(solo pool: one lifecycle call at a time, as one model server serves them), on production
settings. Embeddings come from a loopback hashing server (bench/slow_embedder.py, no delay)
so the CPU goes to the model. --start runs llama.cpp's server from requirements/llm.txt
(tests/support/llama_server.py: SmolLM2-135M-Instruct Q4_1, n_ctx 8192, --threads); with
--llm-url, any OpenAI-compatible server. Every model call passes a recording proxy.

The first --sessions sessions of the LoCoMo conversation (../shared/bench/locomo) are
appended turn by turn (speaker A as the user), with POST /context before each user turn, as
an agent would. The agent keeps its default settings unless --settings says otherwise. No
beat runs: what the appends and /context set off is all the lifecycle does.

Reported per run kind: runs by status, parse tiers and structured mode, fallbacks with their
reasons, latency and tokens (p50/p95), truncated answers; per model call: the largest
output against its max_tokens and prompt + max_tokens against the context; the time from
the last append until the lifecycle had caught up (no call in flight or queued for --quiet
seconds); MEMORY.md, HISTORY and the messages stored; the load average.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._http import Api, percentile  # noqa: E402
from bench.slow_embedder import SlowEmbeddings  # noqa: E402 - delay 0: a fast loopback embedder
from tests.support.celery_process import WorkerProcess  # noqa: E402
from tests.support.llama_server import (  # noqa: E402
    CONTEXT_TOKENS,
    MODEL_ALIAS,
    RecordingProxy,
    start_llama_server,
)
from tests.support.locomo import locomo_messages  # noqa: E402
from tests.support.services import WebServer, create_agent, migrate, service_env  # noqa: E402

DATA = ROOT.parent / "shared/bench/locomo/locomo-dev.json"


def stream(api: Api, session: str, messages: list[dict]) -> dict:
    """Append turn by turn, /context before each user turn: the context manager's actions
    and the client-side latencies."""
    actions, seconds = Counter(), defaultdict(list)
    for message in messages:
        if message["role"] == "user":
            body = {"session_id": session, "query": message["content"]}
            status, answer, took = api.call("POST", "/context", body)
            assert status == 200, (status, answer)
            actions[answer["usage"]["action"]] += 1
            seconds["context"].append(took)
        status, answer, took = api.call(
            "POST", f"/sessions/{session}/messages", {"messages": [message]}
        )
        assert status == 201, (status, answer)
        seconds["append"].append(took)
    return {"actions": actions, "seconds": seconds}


def wait_caught_up(api: Api, proxy: RecordingProxy, quiet: float, timeout: float) -> float:
    """Seconds until no model call has been in flight for `quiet` seconds and the run count
    stopped moving; the moment the last call ended counts, not the quiet wait."""
    began = time.monotonic()
    seen, still_since = -1, time.monotonic()
    while time.monotonic() - began < timeout:
        _, page, _ = api.call("GET", "/runs", None)
        count = len(page["items"]) + (1000 if page["next_cursor"] else 0)
        if count != seen or proxy.in_flight:
            seen, still_since = count, time.monotonic()
        elif time.monotonic() - still_since >= quiet:
            return max(0.0, max(proxy.last_done, began) - began)
        time.sleep(1.0)
    raise RuntimeError(f"the lifecycle had not caught up after {timeout:.0f} s")


def all_runs(api: Api) -> list[dict]:
    runs, cursor = [], None
    while True:
        query = "?limit=500" + (f"&cursor={cursor}" if cursor else "")
        status, page, _ = api.call("GET", "/runs" + query)
        assert status == 200, (status, page)
        runs += page["items"]
        cursor = page["next_cursor"]
        if not cursor:
            return runs[::-1]  # oldest first


def stored_messages(api: Api, session: str) -> int:
    count, cursor = 0, None
    while True:
        query = "?limit=500" + (f"&cursor={cursor}" if cursor else "")
        status, page, _ = api.call("GET", f"/sessions/{session}/messages{query}")
        assert status == 200, (status, page)
        count += len(page["items"])
        cursor = page["next_cursor"]
        if not cursor:
            return count


def sample_load(load: list[float], stop: threading.Event) -> None:
    while not stop.wait(5):
        load.append(os.getloadavg()[0])


def run(args: argparse.Namespace, work: Path) -> dict:
    llama = None
    if args.start:
        llama = start_llama_server(log=work / "llama.log", threads=args.threads)
        args.llm_url, args.model = llama.url, MODEL_ALIAS
    proxy = RecordingProxy(args.llm_url)
    embeddings = SlowEmbeddings(delay=0.0)
    threading.Thread(target=embeddings.serve_forever, daemon=True).start()
    web = worker = None
    try:
        env = service_env(
            work / "data",
            MEMORYHUB_EMBEDDING_URL=embeddings.url,
            MEMORYHUB_EMBEDDING_MODEL="bench-hash",
            MEMORYHUB_LLM_URL=proxy.url,
            MEMORYHUB_LLM_MODEL=args.model,
            MEMORYHUB_LLM_STRUCTURED=args.structured,
            MEMORYHUB_LLM_CONTEXT_TOKENS=str(args.context_tokens),
        )
        migrate(env)
        key = create_agent(env, "bench-real-llm")
        web = WebServer(env, work / "web.log", threads=4)
        worker = WorkerProcess(env=env, log=work / "worker.log", whole_env=True)
        api = web.api(key, timeout=900)
        if args.settings:
            status, body, _ = api.call("PATCH", "/agent/settings", {"settings": args.settings})
            assert status == 200, (status, body)
        status, body, _ = api.call("POST", "/sessions", {"key": args.conversation})
        assert status == 201, (status, body)
        session = body["id"]
        messages = locomo_messages(args.conversation, args.sessions, DATA)

        load, stop = [os.getloadavg()[0]], threading.Event()
        threading.Thread(target=sample_load, args=(load, stop), daemon=True).start()
        began = time.monotonic()
        streamed = stream(api, session, messages)
        appended = time.monotonic() - began
        caught_up = wait_caught_up(api, proxy, args.quiet, args.timeout)
        stop.set()
        memory = api.call("GET", "/entries/MEMORY.md")
        _, history, _ = api.call("GET", "/memory/history?limit=500")
        return {
            "messages": len(messages),
            "stored": stored_messages(api, session),
            "streamed": streamed,
            "appended_seconds": appended,
            "caught_up_seconds": caught_up,
            "runs": all_runs(api),
            "calls": list(proxy.calls),
            "memory": memory[1] if memory[0] == 200 else None,
            "history": history["items"],
            "load": load,
            "load_end": os.getloadavg(),
        }
    finally:
        for service in (worker, web):
            if service is not None:
                service.stop()
        proxy.close()
        embeddings.shutdown()
        if llama is not None:
            llama.stop()


def fmt(values: list[float], unit: str = "") -> str:
    if not values:
        return "-"
    return f"{percentile(values, 50):.0f}{unit} / {percentile(values, 95):.0f}{unit}"


def report(args: argparse.Namespace, r: dict) -> None:
    load = r["load"]
    print(
        f"model: {args.model} at {args.llm_url}"
        + (
            f" (started here, {args.threads} thread(s), n_ctx {CONTEXT_TOKENS})"
            if args.start
            else ""
        )
        + f"; structured {args.structured}; context {args.context_tokens} tokens"
    )
    print(
        f"conversation: {args.conversation}, sessions 1-{args.sessions}, {r['messages']} messages; "
        f"agent settings: {json.dumps(args.settings) if args.settings else 'defaults'}"
    )
    print(
        f"load average (1 min): start {load[0]:.2f}, max {max(load):.2f}, "
        f"end {r['load_end'][0]:.2f}; {os.cpu_count()} CPUs"
    )
    seconds = r["streamed"]["seconds"]
    print(
        f"streamed in {r['appended_seconds']:.0f} s (append p50/p95 "
        f"{fmt([s * 1000 for s in seconds['append']], ' ms')}, /context "
        f"{fmt([s * 1000 for s in seconds['context']], ' ms')}); /context actions: "
        + ", ".join(f"{k} {v}" for k, v in sorted(r["streamed"]["actions"].items()))
    )
    print(f"lifecycle caught up {r['caught_up_seconds']:.0f} s after the last append")
    print()
    print(
        f"{'kind':<12}{'runs':>5}  {'status':<22}{'mode':<22}{'tiers':<14}"
        f"{'latency p50/p95':>18}{'in p50/p95':>14}{'out p50/p95':>14}{'cut':>5}"
    )
    by_kind = defaultdict(list)
    for run_ in r["runs"]:
        by_kind[run_["kind"]].append(run_)
    for kind, runs in sorted(by_kind.items()):
        called = [x for x in runs if x["structured_mode"]]
        statuses = Counter(x["status"] for x in runs)
        modes = Counter(x["structured_mode"] for x in called)
        tiers = Counter(str(x["parse_tier"]) if x["parse_tier"] else "-" for x in called)
        print(
            f"{kind:<12}{len(runs):>5}  "
            f"{' '.join(f'{k} {v}' for k, v in sorted(statuses.items())):<22}"
            f"{' '.join(f'{k} {v}' for k, v in sorted(modes.items())) or '-':<22}"
            f"{' '.join(f't{k} {v}' for k, v in sorted(tiers.items())) or '-':<14}"
            f"{fmt([x['latency_ms'] / 1000 for x in called], ' s'):>18}"
            f"{fmt([x['input_tokens'] for x in called]):>14}"
            f"{fmt([x['output_tokens'] for x in called]):>14}"
            f"{sum(x['truncated'] for x in called):>5}"
        )
    reasons = Counter(
        (x["kind"], x["status"], x["reason"]) for x in r["runs"] if x["status"] != "ok"
    )
    print(
        "not ok: "
        + (
            "; ".join(f"{k} {s} {why or '-'} x{n}" for (k, s, why), n in sorted(reasons.items()))
            or "none"
        )
    )
    print()
    calls = r["calls"]
    answered = [c for c in calls if c.status == 200]
    refused = Counter((c.status, c.response_format) for c in calls if c.status != 200)
    print(
        f"model calls: {len(calls)} ({len(answered)} answered"
        + (
            ", refused: " + ", ".join(f"{m} {s} x{n}" for (s, m), n in refused.items())
            if refused
            else ""
        )
        + "); modes asked: "
        + ", ".join(f"{k} {v}" for k, v in Counter(c.response_format for c in calls).items())
    )
    unbounded = sum(1 for c in answered if not isinstance(c.max_tokens, int))
    over = [
        c
        for c in answered
        if isinstance(c.max_tokens, int) and c.usage.get("completion_tokens", 0) > c.max_tokens
    ]
    if answered and not unbounded:
        fill = max(c.usage["completion_tokens"] / c.max_tokens for c in answered)
        window = max(c.usage["prompt_tokens"] + c.max_tokens for c in answered)
        print(
            f"max_tokens sent on every call; over it: {len(over)}; largest output/max_tokens "
            f"{fill:.2f}; largest prompt + max_tokens {window} of {args.context_tokens}; "
            f"finish_reason length: {sum(c.finish_reason == 'length' for c in answered)}"
        )
    else:
        print(f"calls without max_tokens: {unbounded} of {len(answered)}")
    print(
        f"model time: {sum(c.seconds for c in calls):.0f} s; prompt tokens "
        f"{sum(c.usage.get('prompt_tokens', 0) for c in answered)}, output tokens "
        f"{sum(c.usage.get('completion_tokens', 0) for c in answered)}"
    )
    memory = r["memory"]
    history = Counter(h["kind"] for h in r["history"])
    consolidated = [
        x
        for x in r["runs"]
        if x["kind"] == "consolidate" and x["status"] == "ok" and x["parse_tier"] == 1
    ]
    print(
        f"MEMORY.md: {str(memory['bytes']) + ' bytes' if memory else 'not written (404)'}; "
        f"HISTORY: {', '.join(f'{k} {v}' for k, v in history.items()) or 'empty'}; "
        f"consolidations ok at tier 1: {len(consolidated)}; "
        f"messages stored: {r['stored']} of {r['messages']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--start", action="store_true", help="start SmolLM2-135M on llama.cpp")
    where.add_argument("--llm-url", help="an OpenAI-compatible base URL, ending in /v1")
    parser.add_argument("--model", default=MODEL_ALIAS, help="model name sent with --llm-url")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (--start)")
    parser.add_argument("--context-tokens", type=int, default=CONTEXT_TOKENS)
    parser.add_argument("--structured", default="auto")
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--sessions", type=int, default=6, help="LoCoMo sessions streamed")
    parser.add_argument("--settings", type=json.loads, default={}, help="agent settings, JSON")
    parser.add_argument("--quiet", type=float, default=15.0, help="idle seconds = caught up")
    parser.add_argument("--timeout", type=float, default=3600.0, help="caught-up wait bound")
    parser.add_argument("--keep", action="store_true", help="keep the work dir and its logs")
    args = parser.parse_args()
    if not DATA.is_file():
        sys.exit(f"{DATA} is missing: the LoCoMo dev data sits beside the clone")
    work = Path(tempfile.mkdtemp(prefix="bench-real-llm-"))
    try:
        report(args, run(args, work))
    finally:
        if args.keep:
            print(f"logs in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
