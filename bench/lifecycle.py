"""The memory lifecycle under load: sessions appended turn by turn while the automatic
triggers summarise, consolidate and compact, against a model that answers in 200 ms.

    [DATABASE_URL=... CACHE_URL=...] .venv/bin/python bench/lifecycle.py \
        [--sessions 100] [--messages 200] [--batch 10] [--latency 0.2] [--threads 4] \
        [--max-history-bytes 16384]

Uses the test settings (HashEmbedder, tasks run inline right after each commit: the work a
worker would do, in the appending thread) on whatever DATABASE_URL names, SQLite in a fresh
temporary folder by default. The model is the tests' loopback OpenAI-compatible server: it
waits --latency seconds, then answers each lifecycle prompt the way a concise model would
(a summary of about 300 words, a history paragraph, one new MEMORY.md line kept under 8 KiB,
an archive paragraph, the user's first-person facts), without a `usage` block, so token
counts are memoryhub's own WordPiece estimates. One agent ("bench-lifecycle") holds every
session, with max_history_bytes 16 KiB so each session is compacted (--max-history-bytes
5242880 is the default, which these sessions never reach). Reported: runs by kind and
status, runs per second, LLM calls and tokens per 1,000 messages, and get_context and
hot-history tokens just before and after each session's first compaction.
"""

import argparse
import json
import logging
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.test")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count, Sum  # noqa: E402

from apps.agents.models import Agent  # noqa: E402
from apps.agents.services import agent_create  # noqa: E402
from apps.conversations.models import Session, SessionMeta  # noqa: E402
from apps.conversations.services import NewMessage  # noqa: E402
from apps.lifecycle.models import Run  # noqa: E402
from apps.memory.services import context_turn, messages_append_turn  # noqa: E402
from tests.lifecycle.helpers import _section, prompt, task_of  # noqa: E402
from tests.support.llm_server import Completion, Delay, LLMServer, Reply, _Handler, _Server  # noqa: E402

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
    "november oscar papa quebec romeo sierra tango uniform victor whiskey yankee zulu "
    "coffee meeting tokyo berlin travel deploy review budget cat garden"
).split()


def _words(text: str, n: int, tail: bool = False) -> str:
    words = text.split()
    return " ".join(words[-n:] if tail else words[:n])


def concise(body) -> str:
    """What a concise model answers to each lifecycle prompt."""
    text, task = prompt(body), task_of(body)
    if task == "summary":
        old = _section(text, "Current summary")
        old = "" if old == "(empty)" else old
        return _words(old, 200, tail=True) + " " + _words(_section(text, "New messages"), 100)
    if task == "consolidate":
        memory = _section(text, "Current Long-term Memory")
        lines = [] if memory == "(empty)" else memory.splitlines()
        lines.append("- " + _words(_section(text, "Conversation to Process"), 12))
        while len("\n".join(lines).encode()) > 8192:
            lines.pop(0)  # the model prunes stale facts (seed 004's compression)
        entry = _words(_section(text, "Conversation to Process"), 60)
        return json.dumps({"history_entry": entry, "memory_update": "\n".join(lines)})
    if task == "extract":
        conversation = _section(text, "Conversation").splitlines()
        facts = [line.split(": ", 1)[1] for line in conversation if " user: My " in line]
        return json.dumps({"facts": [{"content": f.split(".")[0]} for f in facts[:5]]})
    return _words(_section(text, "Conversation"), 80)


def start_model(latency: float) -> tuple[LLMServer, _Server]:
    state = LLMServer()

    def answer(body):
        # No usage block: the client estimates tokens with the WordPiece counter.
        text = concise(body)
        return Delay(latency, then=Completion(text, prompt_tokens=None, completion_tokens=None))

    state.script(Reply(answer, repeat=True))
    handler = type("Handler", (_Handler,), {"state": state})
    server = _Server(("127.0.0.1", 0), handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    ).start()
    return state, server


def sentence(rnd: random.Random, turn: int) -> str:
    words = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(12, 60)))
    if turn % 7 == 0:
        words = f"My {rnd.choice(WORDS)} is {rnd.choice(WORDS)}. " + words
    return words


def context_tokens(agent, session) -> int:
    turn = context_turn(
        agent=agent,
        session=session,
        query="what did we decide about the budget",
        max_tokens=100_000,
        lifecycle="off",
    )
    return turn.context.required_tokens


def hot_tokens(session) -> int:
    """Tokens of the messages after start_at: the history an agent replays."""
    meta = SessionMeta.objects.filter(session=session).first()
    qs = session.messages.all()
    if meta is not None and meta.start_at is not None:
        qs = qs.filter(created_at__gte=meta.start_at)
    return qs.aggregate(n=Sum("token_count"))["n"] or 0


def run_session(agent, session, args, rnd, out: dict) -> None:
    before = after = None
    for start in range(0, args.messages, args.batch):
        size = min(args.batch, args.messages - start)
        compacted = SessionMeta.objects.filter(session=session, start_at__isnull=False).exists()
        tokens = (context_tokens(agent, session), hot_tokens(session))
        if not compacted:
            before = tokens
        elif after is None:
            after = tokens
        batch = [
            NewMessage(
                role="user" if (start + i) % 2 == 0 else "assistant",
                content=sentence(rnd, start + i),
            )
            for i in range(size)
        ]
        messages_append_turn(session=session, messages=batch, max_batch=1000)
    out[session.pk] = (before, after)


def worker(sessions, agent, args, seed, out) -> None:
    rnd = random.Random(seed)
    try:
        for session in sessions:
            run_session(agent, session, args, rnd, out)
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--max-history-bytes", type=int, default=16 * 1024)
    args = parser.parse_args()

    logging.getLogger().setLevel(logging.WARNING)  # the inline tasks log every run
    call_command("migrate", verbosity=0)
    model, server = start_model(args.latency)
    settings.MEMORYHUB_PROVIDERS = {
        **settings.MEMORYHUB_PROVIDERS,
        "llm": {
            "CLASS": "apps.providers.llm.openai.OpenAIChat",
            "CONFIG": {"URL": model.url, "MODEL": "bench-model", "TIMEOUT": 30},
        },
    }
    settings.MEMORYHUB_PROVIDER_GUARD = "log"
    Agent.objects.filter(slug="bench-lifecycle").delete()
    agent = agent_create(slug="bench-lifecycle")
    agent.settings = {"max_history_bytes": args.max_history_bytes}
    agent.save()
    sessions = [Session.objects.create(agent=agent, key=f"s{i}") for i in range(args.sessions)]
    out: dict = {}
    started = time.perf_counter()
    threads = [
        threading.Thread(target=worker, args=(sessions[t :: args.threads], agent, args, t, out))
        for t in range(args.threads)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    report(agent, args, model, elapsed, out)
    server.shutdown()


def report(agent, args, model, elapsed, out) -> None:
    total = args.sessions * args.messages
    runs = Run.objects.filter(agent=agent)
    by = runs.values("kind", "status").annotate(n=Count("id")).order_by("kind", "status")
    tokens = runs.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"))
    calls = len(model.chats)
    pairs = [v for v in out.values() if v[0] is not None and v[1] is not None]
    print(
        f"database: {connection.vendor}; {args.sessions} sessions x {args.messages} messages "
        f"({total}), batches of {args.batch}, {args.threads} threads, model latency "
        f"{args.latency * 1000:.0f} ms"
    )
    print(f"max_history_bytes: {args.max_history_bytes}")
    print(f"wall time: {elapsed:.1f} s; appends: {total / elapsed:.0f} messages/s")
    print(f"runs: {runs.count()} ({runs.count() / elapsed:.2f} per second)")
    for row in by:
        print(f"  {row['kind']:<12} {row['status']:<9} {row['n']}")
    print(f"LLM calls per 1,000 messages: {calls * 1000 / total:.1f}")
    print(
        f"LLM tokens per 1,000 messages: input {tokens['i'] * 1000 / total:.0f}, "
        f"output {tokens['o'] * 1000 / total:.0f}"
    )
    for i, what in enumerate(["get_context tokens", "hot history tokens"] if pairs else []):
        before = statistics.mean(b[i] for b, _ in pairs)
        after = statistics.mean(a[i] for _, a in pairs)
        print(
            f"{what} around the first compaction ({len(pairs)} sessions): "
            f"before {before:.0f}, after {after:.0f}"
        )


if __name__ == "__main__":
    main()
