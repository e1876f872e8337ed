"""The MCP Inspector's CLI (@latest) against this tree's server, as docs/mcp.md ("MCP
Inspector") tells a user to run it: it lists the tools of both sets and calls them, over
streamable HTTP and over stdio. A bench run, not a test: the Inspector needs Node >= 22.19
and the npm registry, which CI does not have.

    .venv/bin/python bench/mcp_inspector.py [--npx /path/to/node22/bin/npx]

Self-contained: starts gunicorn on a free port with a fresh data dir (SQLite, no Celery
worker), migrates and creates the agent "bench-inspector-<time>". Each check prints one line
(ok/FAIL); the exit status is 1 when any failed. `--npx` (default: the `npx` on PATH) runs
the Inspector with the `node` first on PATH, which must be Node >= 22.19. Without one,
`npm i --prefix /tmp/node22 node@22` installs it: run with
PATH=/tmp/node22/node_modules/.bin:$PATH.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _http import manage, start_gunicorn, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
INSPECTOR = "@modelcontextprotocol/inspector@latest"
CLEARED = ("DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL", "CACHE_URL")
DEFAULT_SET = [
    "append_messages",
    "get_context",
    "memory_save",
    "memory_recall",
    "memory_search",
    "search_chat_history",
    "entry_add",
    "entry_write",
    "remember_error",
    "search_error_memory",
]


def server_env(data_dir: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in CLEARED and not k.startswith("MEMORYHUB_")
    }
    env.update(MEMORYHUB_DATA_DIR=data_dir, PYTHONPATH=str(ROOT))
    return env


def inspector(npx: str, *args: str) -> dict:
    """One Inspector CLI run (`npx -y @…@latest --cli ARGS`): its JSON answer on stdout."""
    done = subprocess.run(
        [npx, "-y", INSPECTOR, "--cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"inspector {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return json.loads(done.stdout)


def check(label: str, ok: bool, failures: list[str]) -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {label}")
    if not ok:
        failures.append(label)


def run_checks(npx: str, base: str, key: str, env: dict[str, str]) -> list[str]:
    failures: list[str] = []
    auth = f"Authorization: Bearer {key}"
    url = f"{base}/mcp"

    listed = inspector(
        npx, url, "--strict", "--transport", "http", "--header", auth, "--method", "tools/list"
    )
    names = [tool["name"] for tool in listed["tools"]]
    check(f"http tools/list: the default set ({len(names)} tools)", names == DEFAULT_SET, failures)

    every = inspector(
        npx, f"{url}?tools=all", "--transport", "http", "--header", auth, "--method", "tools/list"
    )
    check(f"http ?tools=all: {len(every['tools'])} tools", len(every["tools"]) == 21, failures)

    by_header = inspector(
        npx,
        url,
        "--transport",
        "http",
        "--header",
        auth,
        "--header",
        "X-MemoryHub-Tools: all",
        "--method",
        "tools/list",
    )
    check("http X-MemoryHub-Tools: all", by_header == every, failures)

    saved = inspector(
        npx,
        url,
        "--transport",
        "http",
        "--header",
        auth,
        "--method",
        "tools/call",
        "--tool-name",
        "memory_save",
        "--tool-arg",
        "content=The user's cat is called Whiskerino",
    )
    action = (saved.get("structuredContent") or {}).get("action")
    check(f"http tools/call memory_save: {action}", action == "created", failures)

    recalled = inspector(
        npx,
        url,
        "--transport",
        "http",
        "--header",
        auth,
        "--method",
        "tools/call",
        "--tool-name",
        "memory_recall",
        "--tool-arg",
        "query=What is the cat called?",
    )
    items = (recalled.get("structuredContent") or {}).get("items", [])
    value = items[0]["fact"]["value"] if items else None
    check(f"http tools/call memory_recall: {value!r}", value is not None, failures)

    stdio = [
        "-e",
        f"MEMORYHUB_DATA_DIR={env['MEMORYHUB_DATA_DIR']}",
        "--cwd",
        str(ROOT),
        "--",
        sys.executable,
        "manage.py",
        "mcp",
        "--key",
        key,
    ]
    listed = inspector(npx, "--method", "tools/list", *stdio)
    names = [tool["name"] for tool in listed["tools"]]
    check(f"stdio tools/list: the default set ({len(names)} tools)", names == DEFAULT_SET, failures)
    every = inspector(npx, "--method", "tools/list", *stdio, "--all-tools")
    check(f"stdio --all-tools: {len(every['tools'])} tools", len(every["tools"]) == 21, failures)
    appended = inspector(
        npx,
        "--method",
        "tools/call",
        "--tool-name",
        "append_messages",
        "--tool-arg",
        "session_id=inspector-chat",
        'messages=[{"role": "user", "content": "hello"}]',
        *stdio,
    )
    created = (appended.get("structuredContent") or {}).get("created")
    check(f"stdio tools/call append_messages: created {created}", created == 1, failures)
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npx", default=shutil.which("npx") or "npx")
    args = parser.parse_args()
    # npx runs the Inspector with the `node` first on PATH (its `#!/usr/bin/env node`).
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"node {node}, {INSPECTOR}")
    if tuple(int(part) for part in node.lstrip("v").split(".")[:2]) < (22, 19):
        print("the Inspector needs Node >= 22.19: put one first on PATH (see the docstring)")
        return 2
    with tempfile.TemporaryDirectory(prefix="mh-inspector-") as data_dir:
        env = server_env(data_dir)
        manage(env, "migrate", "--noinput")
        key = manage(env, "create_agent", f"bench-inspector-{int(time.time())}")
        key = key.strip().splitlines()[-1]
        with open(Path(data_dir) / "gunicorn.log", "w") as log:
            proc, base = start_gunicorn(env, log, threads=4)
            try:
                wait_healthy(base, proc)
                failures = run_checks(args.npx, base, key, env)
            finally:
                proc.terminate()
                proc.wait(30)
    print("all passed" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
