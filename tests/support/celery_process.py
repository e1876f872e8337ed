"""A real Celery worker in its own process, on the test database and the configured broker:
for tests that must kill a worker (kill -9) and see what its broker does about it. Its
process-group Popen and stop (`ProcessGroup`) also run bench/cluster.py's beat and embedder.

The worker inherits MEMORYHUB_DATA_DIR (so the filesystem broker's folders), and is pointed
at pytest-django's test database through DATABASE_URL. Tests using it commit their data:
mark them `django_db(transaction=True)`.
"""

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class ProcessGroup:
    """A child in its own process group, its output appended to `log`: `stop()` (SIGTERM,
    then SIGKILL after 20 s) and `kill()` (SIGKILL) reach its children too."""

    def __init__(self, command: list[str], *, env: dict[str, str], log: Path, cwd: Path = ROOT):
        self.log = log
        self._out = log.open("ab")
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, nothing acknowledged or given back."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self._out.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        if not self._out.closed:
            self._out.close()


class WorkerProcess(ProcessGroup):
    """`celery worker --pool solo` in a new process group; `kill()` is kill -9."""

    def __init__(self, *, env: dict[str, str], log: Path, whole_env: bool = False) -> None:
        """`env` is added to this process's environment on the test database and broker;
        with `whole_env` it is the worker's whole environment (tests/support/services.py's
        service_env: production settings, the caller's database and broker)."""
        full_env = (
            dict(env)
            if whole_env
            else {
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "memoryhub.settings.test",
                "DATABASE_URL": test_database_url(),
                "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
                **env,
            }
        )
        name = f"killable-{uuid.uuid4().hex[:8]}@%h"
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memoryhub",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "INFO",
            "--without-mingle",
            "--without-gossip",
            "-n",
            name,
        ]
        super().__init__(command, env=full_env, log=log)
