"""`manage.py move_to_postgres` at scale: time and peak memory of a move from SQLite.

Builds an embedded store in a temporary data folder (SQLite: one agent, N messages with
384-d vectors and text drawn from a small vocabulary, in sessions of 200), then runs the
command exactly as a user would, in a child process, into a new PostgreSQL database, and
reports wall time, rows per second and the child's peak RSS. The database and the folder
are removed afterwards.

    .venv/bin/python bench/move_to_postgres.py --messages 100000 \\
        --server postgres://postgres@127.0.0.1:5432
"""

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg

ROOT = Path(__file__).resolve().parents[1]
WORDS = (
    "cat piano support group painting pottery sunset lake train basil bicycle taxes violin "
    "fence risotto dentist chess snow printer grandma garden coffee meeting report travel "
    "holiday doctor music movie recipe weather school project deadline friend family"
).split()


def build_store(data_dir: Path, n: int, session_size: int) -> None:
    """Migrate a fresh SQLite store in `data_dir` and load `n` messages into it."""
    env = {**os.environ, "MEMORYHUB_DATA_DIR": str(data_dir)}
    env.pop("DATABASE_URL", None)
    env.pop("DATABASE_REPLICA_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], env=env, cwd=ROOT, check=True)
    os.environ.update(
        MEMORYHUB_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="memoryhub.settings.base"
    )
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("DATABASE_REPLICA_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from apps.agents.services import agent_create
    from apps.conversations.models import Message, Session

    rng = random.Random(7)
    vectors = np.random.default_rng(7)
    agent = agent_create(slug="bench", team_name="bench")
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for start in range(0, n, session_size):
        session = Session.objects.create(agent=agent, key=f"s{start}")
        batch = []
        for i in range(start, min(n, start + session_size)):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))
            v = vectors.standard_normal(384).astype(np.float32)
            batch.append(
                Message(
                    id=uuid.UUID(int=rng.getrandbits(128)), agent=agent, session=session,
                    role="user" if i % 2 == 0 else "assistant", content=text,
                    created_at=t0 + timedelta(seconds=i), byte_size=len(text),
                    embedding=v / np.linalg.norm(v), embedding_model="bench@384",
                )
            )  # fmt: skip
        Message.objects.bulk_create(batch)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--messages", type=int, default=100_000)
    p.add_argument("--session-size", type=int, default=200)
    p.add_argument("--chunk-size", type=int, default=2000)
    p.add_argument("--server", default="postgres://postgres@127.0.0.1:5432")
    args = p.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="mh-bench-move-"))
    name = f"mh_bench_move_{uuid.uuid4().hex[:8]}"
    try:
        started = time.monotonic()
        build_store(data_dir, args.messages, args.session_size)
        print(f"loaded {args.messages:,} messages in {time.monotonic() - started:.1f} s")
        env = {**os.environ, "MEMORYHUB_DATA_DIR": str(data_dir)}
        env.pop("DATABASE_URL", None)
        env.pop("DATABASE_REPLICA_URL", None)
        command = [sys.executable, str(ROOT / "manage.py"), "move_to_postgres",
                   f"{args.server}/{name}", "--chunk-size", str(args.chunk_size)]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
        seconds = time.monotonic() - started
        print(
            "\n".join(
                line for line in done.stdout.splitlines() if "Message" in line or "==>" in line
            )
        )
        if done.returncode:
            print(done.stderr[-3000:])
            raise SystemExit(done.returncode)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        load = os.getloadavg()[0]
        print(
            f"move: {args.messages:,} messages in {seconds:.1f} s "
            f"({args.messages / seconds:,.0f} messages/s), peak RSS {rss:.0f} MiB, load {load:.2f}"
        )
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
        with psycopg.connect(f"{args.server}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


if __name__ == "__main__":
    main()
