"""Fuzz the agents' API with schemathesis against a live server of this tree.

The backend is the environment's: DATABASE_URL, CELERY_BROKER_URL and CACHE_URL set means
PostgreSQL + Redis (a dedicated `<db>_fuzz` database, dropped and created), unset means SQLite
+ filesystem broker in a fresh data dir. One gunicorn worker serves it with tasks run eagerly
(inline, after commit), so a task that fails on fuzzed data fails its request and is seen.
schemathesis runs its coverage, fuzzing and stateful phases with a fixed seed (100 examples
per operation: about 6,600 cases, 1.5-5 minutes on 2 cores) and the checks in CHECKS. Exits
non-zero on any failure or under MIN_CASES cases; the server log and the junit/ndjson reports
go to var/ci/fuzz-*.

    .venv/bin/python .ci/fuzz.py [--seed N] [--max-examples N] [-- extra schemathesis args]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._http import manage, start_gunicorn, wait_healthy  # noqa: E402

CHECKS = "not_a_server_error,response_schema_conformance,status_code_conformance"
MIN_CASES = 1000


def run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command of our own making (no shell) from the repository root."""
    return subprocess.run(cmd, cwd=ROOT, check=check)  # noqa: S603


def backend_env() -> tuple[str, dict[str, str]]:
    """(backend name, server environment) for a fresh, empty database of this backend."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env |= {
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings.base",
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "MEMORYHUB_KEY_TOUCH_SECONDS": "0",
        # schemathesis sends wrong keys on purpose; past the failed-auth limit its address
        # would get 429 for everything, so what is tested would depend on its speed. The
        # throttle has its own tests (tests/core/test_rate_limits.py).
        "MEMORYHUB_AUTH_FAILURES_PER_MINUTE": "1000000",
    }
    # The default embedder (MiniLM, offline) and no LLM: the endpoints that need one answer
    # without it, as a fresh install does.
    env.pop("MEMORYHUB_LLM_URL", None)
    env.pop("MEMORYHUB_EMBEDDING_URL", None)
    data_dir = Path(tempfile.mkdtemp(prefix="memoryhub-fuzz-"))
    env["MEMORYHUB_DATA_DIR"] = str(data_dir)
    if not env.get("DATABASE_URL"):
        for name in ("DATABASE_URL", "DATABASE_REPLICA_URL", "CELERY_BROKER_URL", "CACHE_URL"):
            env.pop(name, None)
        return "sqlite", env
    url = urllib.parse.urlsplit(env["DATABASE_URL"])
    name = url.path.lstrip("/") + "_fuzz"
    admin = url._replace(path="/postgres").geturl()
    for sql in (f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"'):
        run("psql", admin, "-qc", sql)
    env["DATABASE_URL"] = url._replace(path=f"/{name}").geturl()
    if replicas := env.get("DATABASE_REPLICA_URL"):
        # A streaming replica holds the whole cluster: the new database reaches it by itself.
        env["DATABASE_REPLICA_URL"] = ",".join(
            urllib.parse.urlsplit(u.strip())._replace(path=f"/{name}").geturl()
            for u in replicas.split(",")
        )
    if cache := env.get("CACHE_URL"):
        # Rate-limit counters and cached probes of an earlier run must not leak in.
        run("redis-cli", "-u", cache, "flushdb")
    return "postgres", env


def schemathesis_cmd(base: str, key: str, out: Path, args: argparse.Namespace) -> list[str]:
    return [
        sys.executable,
        str(ROOT / ".ci" / "schemathesis_serial_ast.py"),
        *("--config-file", str(ROOT / ".ci" / "fuzz.toml")),
        "run",
        f"{base}/api/v1/openapi.json",
        *("--checks", CHECKS),
        *("--seed", str(args.seed)),
        *("--max-examples", str(args.max_examples)),
        *("--header", f"Authorization: Bearer {key}"),
        *("--workers", str(args.workers)),
        "--generation-database=none",
        "--suppress-health-check=all",
        "--no-color",
        # Reproductions show the real values (the key is a throwaway in a throwaway database).
        "--output-sanitize=false",
        *("--report", "junit,ndjson", "--report-dir", str(out)),
        *args.extra,
    ]


def case_count(ndjson: Path) -> int:
    """Generated test cases in the run, from schemathesis's event stream."""
    cases = 0
    for line in ndjson.read_text().splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if finished and finished.get("recorder"):
            cases += len(finished["recorder"].get("cases", {}))
    return cases


def serve_and_fuzz(
    env: dict[str, str], backend: str, key: str, report: Path, args: argparse.Namespace
) -> subprocess.CompletedProcess:
    """Start gunicorn on the prepared database, run schemathesis against it, stop it."""
    server_log = report.parent / f"fuzz-{backend}-server.log"
    with server_log.open("w") as log:
        server, base = start_gunicorn(env, log, threads=4)
        try:
            health = wait_healthy(base, server)
            print(f"fuzz {backend}: server {base} (/healthz {health}), log {server_log}")
            return run(*schemathesis_cmd(base, key, report, args), check=False)
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="more schemathesis options, after --")
    args = parser.parse_args()

    started = time.monotonic()
    out = ROOT / "var" / "ci"
    out.mkdir(parents=True, exist_ok=True)
    backend, env = backend_env()
    report = out / f"fuzz-{backend}"
    shutil.rmtree(report, ignore_errors=True)
    try:
        manage(env, "migrate", "--noinput", "-v", "0")
        key = manage(env, "create_agent", "fuzz").strip().splitlines()[-1]
        done = serve_and_fuzz(env, backend, key, report, args)
    finally:
        shutil.rmtree(env["MEMORYHUB_DATA_DIR"], ignore_errors=True)
    events = next(report.glob("*.ndjson"), None)
    cases = case_count(events) if events else 0
    seconds = time.monotonic() - started
    print(f"fuzz {backend}: {cases} generated cases in {seconds:.0f} s, exit {done.returncode}")
    if done.returncode != 0:
        return done.returncode
    if cases < MIN_CASES:
        print(f"fuzz {backend}: fewer than {MIN_CASES} cases")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
