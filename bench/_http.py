"""Tiny stdlib HTTP client for the benchmarks: they talk to a running server like an agent."""

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, headers (lower-case names), raw body, seconds taken."""

    status: int
    headers: dict[str, str]
    raw: bytes
    seconds: float

    def json(self) -> Any:
        return json.loads(self.raw) if self.raw else None


def fetch(
    method: str,
    url: str,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 120.0,
) -> Reply:
    """Send one request (a JSON body when given); HTTP error statuses are answers, not raised."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw, status, got = resp.read(), resp.status, resp.headers
    except urllib.error.HTTPError as exc:
        raw, status, got = exc.read(), exc.code, exc.headers
    elapsed = time.perf_counter() - start
    return Reply(status, {k.lower(): v for k, v in got.items()}, raw, elapsed)


@dataclass
class Api:
    base: str  # e.g. http://127.0.0.1:8000/api/v1
    key: str
    timeout: float = 120.0

    def request(self, method: str, path: str, body: Any = None) -> Reply:
        """The whole answer: status, headers and raw body (which need not be JSON)."""
        auth = {"Authorization": f"Bearer {self.key}"}
        return fetch(method, self.base + path, body, headers=auth, timeout=self.timeout)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
        """Return (status, parsed JSON or None, seconds)."""
        reply = self.request(method, path, body)
        return reply.status, reply.json(), reply.seconds


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


# --- a server of this tree, started by a bench -----------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env: dict[str, str], *args: str) -> str:
    """Run `manage.py ARGS` of this tree with `env`; its stdout, or RuntimeError."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> int:
    """/healthz's status once the server answers (a degraded 503 counts as answering)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"web server exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=5) as resp:
                return resp.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url}/healthz did not answer within {timeout:.0f} s")


def start_gunicorn(
    env: dict[str, str], log, *, threads: int, workers: int = 1
) -> tuple[subprocess.Popen, str]:
    """gunicorn serving memoryhub on a free port, logging to `log`: (process, base URL)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            *("-m", "gunicorn", "memoryhub.wsgi", "--chdir", str(ROOT)),
            *("--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--threads", str(threads)),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc, f"http://127.0.0.1:{port}"
