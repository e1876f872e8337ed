"""Embedding throughput of one worker: messages/s through the pipeline against the raw encode
rate of the same texts, in the same run (issue 29 item 1).

    .venv/bin/python bench/embed_throughput.py [--messages 2000] [--threads 0] [--no-spin]
        [--compare-spin 3]
    DATABASE_URL=postgres://... .venv/bin/python bench/embed_throughput.py

Appends `--messages` LoCoMo turns (../shared/bench/locomo/locomo-dev.json, one agent per
conversation, 1-3 turns per append, as agents append) through `messages_append` into a fresh
data dir on the embedded default (SQLite), or into DATABASE_URL's database (the agents it
creates are deleted at the end). Then, each time from a clean slate (vectors and token states
cleared), it times the worker's task body, `search.embed_agent` run in this process as a
worker runs it, until no message lacks a vector:

- `instant`: an OpenAI-compatible embedder on loopback that answers at once (one constant
  unit vector per text): the pipeline's own cost per message (read, HTTP, one UPDATE);
- `per-append instant`: the same embedder with one `search.embed` task per append (the task
  shape before the per-agent sweep), for comparison;
- `MiniLM`: the default local model (int8, `--threads`; 0 = every available core), with its
  token states, beside `raw MiniLM`: `embed_with_tokens` alone over the same texts in the same
  batches, timed before and after the pipeline run (the mean of both is the reference).
  `--no-spin` turns onnxruntime's busy-waiting off (on by default, as in the service);
  `--compare-spin N` then times the raw encode N times each with it off and on, alternating.

The broker is in memory and the cache per process: a sweep costs one broker message per
MEMORYHUB_EMBEDDING_SWEEP_LIMIT rows, which this leaves out. Each figure is printed with the
1-minute load average at its end (the machine may be shared), and with messages per CPU
second of this process (all its threads), which a shared machine disturbs less.
"""

import argparse
import json
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared/bench/locomo/locomo-dev.json"


class Instant(BaseHTTPRequestHandler):
    """POST /v1/embeddings: one fixed unit vector per input, at once (answers cached by size)."""

    VECTOR = [0.05103103630798288] * 384  # unit length
    answers: dict[int, bytes] = {}

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        n = len(body["input"])
        raw = self.answers.get(n)
        if raw is None:
            data = [{"object": "embedding", "index": i, "embedding": self.VECTOR} for i in range(n)]
            raw = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
            self.answers[n] = raw
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args) -> None:
        pass


def serve(port) -> None:
    """The instant embedder, in its own process: its work is not the worker's."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Instant)
    port.value = server.server_port
    server.serve_forever()


def start_instant() -> tuple[multiprocessing.Process, int]:
    port = multiprocessing.Value("i", 0)
    process = multiprocessing.Process(target=serve, args=(port,), daemon=True)
    process.start()
    deadline = time.monotonic() + 30
    while not port.value and time.monotonic() < deadline:
        time.sleep(0.05)
    return process, port.value


def setup_django(data_dir: str) -> None:
    os.environ.update(
        MEMORYHUB_DATA_DIR=data_dir,
        DJANGO_SETTINGS_MODULE="memoryhub.settings.base",
        CELERY_BROKER_URL="memory://",
        CACHE_URL="locmemcache://",
        MEMORYHUB_PROVIDER_GUARD="off",
        MEMORYHUB_LOG_LEVEL="WARNING",
    )
    import django

    django.setup()


def turns(n: int) -> list[list[tuple[str, str]]]:
    """Up to `n` LoCoMo turns (speaker, text), one list per conversation."""
    samples = json.loads(DATA.read_text())
    out, total = [], 0
    for sample in samples:
        conv = sample["conversation"]
        texts = []
        for key in sorted(k for k in conv if k.startswith("session_") and k[8:].isdigit()):
            for turn in conv[key]:
                text = turn.get("text", "")
                if turn.get("blip_caption"):
                    text = f"{text} [shares an image: {turn['blip_caption']}]"
                texts.append((turn["speaker"], text))
        texts = texts[: n - total]
        out.append(texts)
        total += len(texts)
        if total >= n:
            break
    return out


def load(conversations, rng) -> tuple[list, list[list]]:
    """One agent per conversation; appends of 1-3 turns. Returns the agents and the ids of
    each append."""
    from apps.agents.services import agent_create
    from apps.conversations.services import NewMessage, messages_append, session_create

    agents, appends = [], []
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for i, texts in enumerate(conversations):
        agent = agent_create(slug=f"embed-bench-{os.getpid()}-{i}", team_name="embed-bench")
        session, _ = session_create(agent=agent, key="locomo")
        agents.append(agent)
        at = 0
        while at < len(texts):
            step = rng.randint(1, 3)
            batch = [
                NewMessage(
                    role="user",
                    name=speaker,
                    content=text,
                    created_at=t0 + timedelta(seconds=at + j),
                )
                for j, (speaker, text) in enumerate(texts[at : at + step])
            ]
            result = messages_append(session=session, messages=batch)
            appends.append([m.pk for m in result.messages])
            at += step
    return agents, appends


def clear(agents) -> None:
    from apps.conversations.models import Message, MessageTokens

    mine = Message.objects.filter(agent__in=agents)
    MessageTokens.objects.filter(message__in=mine).delete()
    mine.update(embedding=None, embedding_model="", embedding_error="", embedding_attempts=0)


def pending(agents) -> int:
    from apps.conversations.models import Message

    return Message.objects.filter(agent__in=agents, embedding__isnull=True).count()


def cpu() -> float:
    """This process's CPU seconds (every thread: onnxruntime's too)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def sweep_all(agents) -> tuple[float, float]:
    """Wall and CPU seconds of sweeping every agent until no message lacks a vector."""
    from apps.search.tasks import embed_agent_task

    start, used = time.perf_counter(), cpu()
    while True:
        for agent in agents:
            embed_agent_task.apply(args=(agent.pk,)).get()
        if not pending(agents):
            return time.perf_counter() - start, cpu() - used


def per_append(appends) -> tuple[float, float]:
    from apps.search.tasks import embed_task

    start, used = time.perf_counter(), cpu()
    for ids in appends:
        embed_task.apply(args=("messages", [str(i) for i in ids])).get()
    return time.perf_counter() - start, cpu() - used


def raw(embedder, texts: list[str], size: int) -> tuple[float, float]:
    start, used = time.perf_counter(), cpu()
    for at in range(0, len(texts), size):
        embedder.embed_with_tokens(texts[at : at + size])
    return time.perf_counter() - start, cpu() - used


def compare_spin(report, texts: list[str], size: int, threads: int, rounds: int) -> None:
    """The raw encode with onnxruntime's spinning off and on, alternating, `rounds` each."""
    from apps.providers.embeddings.minilm import MiniLMEmbedder

    both = {spin: MiniLMEmbedder(threads=threads, spin=spin) for spin in (False, True)}
    for embedder in both.values():
        embedder.embed_with_tokens(texts[:size])  # each setting is its own runtime: load it
    rates: dict[bool, list[float]] = {False: [], True: []}
    for i in range(rounds):
        for spin in (False, True) if i % 2 == 0 else (True, False):
            name = f"raw MiniLM encode ({threads} threads), spin {'on' if spin else 'off'}"
            rates[spin].append(report(name, raw(both[spin], texts, size)))
    if rounds:
        off, on = (sorted(rates[s])[len(rates[s]) // 2] for s in (False, True))
        print(f"spin off / on (medians): {off / on:.2f}")


def use(settings, entry) -> None:
    settings.MEMORYHUB_PROVIDERS = {**settings.MEMORYHUB_PROVIDERS, "embedding": entry}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=0, help="MiniLM threads (0: every core)")
    parser.add_argument("--skip-minilm", action="store_true")
    parser.add_argument("--no-spin", action="store_true", help="MiniLM without spinning")
    parser.add_argument("--compare-spin", type=int, default=0, metavar="ROUNDS")
    args = parser.parse_args()
    server, port = start_instant()  # forked before Django holds any connection
    data_dir = tempfile.mkdtemp(prefix="embed-bench-")
    setup_django(data_dir)
    from django.conf import settings
    from django.core.management import call_command

    from apps.conversations.apps import embedding_text
    from apps.conversations.models import Message
    from apps.providers.embeddings import get_embedder
    from apps.providers.embeddings.minilm import MiniLMEmbedder

    call_command("migrate", verbosity=0)
    instant = {
        "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
        "CONFIG": {"URL": f"http://127.0.0.1:{port}/v1", "MODEL": "instant", "DIMENSIONS": 384},
    }
    minilm = {
        "CLASS": "apps.providers.embeddings.minilm.MiniLMEmbedder",
        "CONFIG": {"THREADS": args.threads, "SPIN": not args.no_spin},
    }
    use(settings, instant)  # appends embed nothing in this process (the broker is in memory)
    agents, appends = load(turns(args.messages), random.Random(29))
    n = sum(len(ids) for ids in appends)
    size = int(settings.MEMORYHUB_EMBEDDING_BATCH_SIZE)
    backend = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(f"{n} messages, {len(agents)} agents, {len(appends)} appends; {backend}; batch {size}")
    rows = []

    def report(name: str, seconds: tuple[float, float]) -> float:
        wall, used = seconds
        load_avg = os.getloadavg()[0]
        rows.append((name, n / wall, n / used, load_avg))
        rates = f"{n / wall:,.0f} messages/s, {n / used:,.0f} per CPU second"
        print(f"{name}: {rates} (load {load_avg:.2f})", flush=True)
        return n / wall

    try:
        clear(agents)
        report("instant, per-agent sweep", sweep_all(agents))
        clear(agents)
        report("instant, per-append tasks", per_append(appends))
        if not args.skip_minilm:
            use(settings, minilm)
            embedder = get_embedder()
            assert isinstance(embedder, MiniLMEmbedder)
            texts = [
                embedding_text(m)
                for m in Message.objects.filter(agent__in=agents).order_by(
                    "agent", "created_at", "id"
                )
            ]
            embedder.embed_with_tokens(texts[:size])  # load the model outside the timings
            threads = embedder.threads
            before = report(
                f"raw MiniLM encode ({threads} threads), before", raw(embedder, texts, size)
            )
            clear(agents)
            pipeline = report(f"MiniLM, per-agent sweep ({threads} threads)", sweep_all(agents))
            after = report(
                f"raw MiniLM encode ({threads} threads), after", raw(embedder, texts, size)
            )
            print(f"pipeline / raw: {pipeline / ((before + after) / 2):.2f}")
            compare_spin(report, texts, size, threads, args.compare_spin)
    finally:
        from apps.agents.models import Agent

        Agent.objects.filter(pk__in=[a.pk for a in agents]).delete()
        server.terminate()
        server.join()
    print("\n| run | messages/s | per CPU second | load (1 min) |\n|---|---:|---:|---:|")
    for name, rate, per_cpu, load_avg in rows:
        print(f"| {name} | {rate:,.0f} | {per_cpu:,.0f} | {load_avg:.2f} |")


if __name__ == "__main__":
    main()
