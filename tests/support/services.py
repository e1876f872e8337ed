"""Real services of a test's own, each on a free loopback port, stopped and started at will:
a private PostgreSQL cluster, a private redis-server and this tree's web server (gunicorn).

For fault injection (tests/faults) and benches (bench/soak.py): stopping one of these hurts
nothing shared. Nothing here needs Django settings, so a bench can use it too.
"""

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from bench._http import ROOT, Api, free_port, manage, start_gunicorn, wait_healthy

# What would point a child at another deployment than the one a test builds for it.
INHERITED_OUT = (
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "DATABASE_REPLICA_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
)


def wait_for(condition: Callable[[], object], timeout: float, what: str, every: float = 0.05):
    """Poll `condition` until it returns something truthy (returned), or AssertionError."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def _tail(path: Path, chars: int = 4000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


def service_env(data_dir: Path, **values: str) -> dict[str, str]:
    """The environment of a web server or worker of this tree on production settings
    (memoryhub.settings.base): this process's, minus its deployment and MEMORYHUB_* variables,
    plus `values` (DATABASE_URL, CELERY_BROKER_URL, MEMORYHUB_EMBEDDING_URL, ...)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in INHERITED_OUT and not k.startswith(("MEMORYHUB_", "PYTEST"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="memoryhub.settings.base",
        MEMORYHUB_DATA_DIR=str(data_dir),
        PYTHONPATH=str(ROOT),  # this tree's code, whatever the venv's site-packages hold
    )
    env.update(values)
    return env


class RedisServer:
    """`redis-server` without persistence on a free port; `stop()` and `start()` keep the port
    (a restarted Redis is empty, as after a crash without persistence)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.log = directory / f"redis-{self.port}.log"
        self.process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> "RedisServer":
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly"]
        args += ["no", "--dir", str(self.directory), "--logfile", str(self.log)]
        self.process = subprocess.Popen(["redis-server", *args], start_new_session=True)
        wait_for(self._ready, 15, f"redis-server on port {self.port} (log: {self.log})")
        return self

    def _ready(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"redis-server exited {self.process.returncode}\n{_tail(self.log)}")
        return self.command("PING") == "PONG"

    def command(self, *words: str) -> str:
        """One redis-cli command's output ("" when the server does not answer)."""
        done = subprocess.run(
            ["redis-cli", "-p", str(self.port), *words], capture_output=True, text=True, timeout=10
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    def stop(self) -> None:
        """SIGTERM and wait; the port is closed when this returns."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(15)
        self.process = None


def _pg_bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    return found[-1].parent


class PostgresCluster:
    """A private PostgreSQL cluster (initdb in a temporary directory, trust auth, no fsync)
    on a free port, run as the `postgres` OS user when this process is root. Never the
    shared cluster: `stop()` and `start()` touch only this one."""

    def __init__(self, *, fsync: bool = False) -> None:
        self.fsync = fsync  # off by default: tests need no crash safety, only speed
        self.bindir = _pg_bindir()
        self.root = Path(tempfile.mkdtemp(prefix="memoryhub-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")

    def _run(self, tool: str, *args: str, timeout: float = 120) -> str:
        command = [str(self.bindir / tool), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(
                f"{tool} failed:\n{done.stdout}{done.stderr}\n{_tail(self.log, 2000)}"
            )
        return done.stdout

    def init(self, *, database: str = "memoryhub") -> "PostgresCluster":
        """initdb, start, and create `database` (the extensions come with migrate)."""
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("max_connections = 200\n")  # a soak's web threads, workers, psql
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", database)
        self.database = database
        return self

    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{self.database}"

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root}"
        options += "" if self.fsync else " -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """`pg_ctl stop -m fast`: open sessions are terminated, the port closes."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def psql(self, sql: str) -> list[list[str]]:
        return psql(self.url(), sql)

    def destroy(self) -> None:
        """Stop (immediately, if still running) and delete the cluster's files."""
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError):
                self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def psql(url: str, sql: str) -> list[list[str]]:
    """Rows of one query on the database at `url`, as text (psql -At, tab-separated)."""
    out = subprocess.run(
        ["psql", url, "-XAtq", "-F", "\t", "-c", sql],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return [line.split("\t") for line in out.splitlines()]


class WebServer:
    """This tree's web server: gunicorn with `workers` x `threads` on a free port."""

    def __init__(self, env: dict[str, str], log: Path, *, workers: int = 1, threads: int = 8):
        self.log = log
        self._out: IO[bytes] = log.open("ab")
        self.process, self.base = start_gunicorn(env, self._out, threads=threads, workers=workers)
        try:
            wait_healthy(self.base, self.process)
        except BaseException:
            self.stop()
            raise

    def api(self, key: str, *, timeout: float = 30.0) -> Api:
        return Api(base=self.base + "/api/v1", key=key, timeout=timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._out.close()

    def log_tail(self, chars: int = 4000) -> str:
        return _tail(self.log, chars)


def create_agent(env: dict[str, str], slug: str) -> str:
    """`manage.py create_agent SLUG` on `env`'s database: the new agent's API key."""
    return manage(env, "create_agent", slug).strip().splitlines()[-1]


def migrate(env: dict[str, str]) -> None:
    manage(env, "migrate", "--noinput")


def append(api, session: str, contents: list[str]) -> None:
    """Append user messages over HTTP and assert the 201 stored them all."""
    reply = api.request(
        "POST",
        f"/sessions/{session}/messages",
        {"messages": [{"role": "user", "content": c} for c in contents]},
    )
    assert reply.status == 201, reply.raw
    assert reply.json()["created"] == len(contents)
