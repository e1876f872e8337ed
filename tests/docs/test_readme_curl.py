"""The README's curl session runs as written, in bash with the real curl, against a live
server: every call it shows answers a 2xx whose body matches the OpenAPI schema of that
operation and status, and what the README's comments claim of an answer holds."""

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from jsonschema import FormatChecker
from jsonschema.validators import validator_for
from memoryhub_client.chat import to_openai_messages

from apps.agents.services import api_key_issue
from tests.support.openai_chat import validate

README = Path(settings.BASE_DIR) / "README.md"
SHOWN_URL = "http://127.0.0.1:8000/api/v1"

# Each call is recorded by a curl wrapper: its body in N.body, then "METHOD URL STATUS".
RECORDER = r"""
set -euo pipefail
n=0
curl() {
  n=$((n + 1))
  command curl -sS -o "$OUT/$n.body" -w '%{method} %{url_effective} %{http_code}\n' "$@" \
    >> "$OUT/calls"
}
"""


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # under /api/v1, as the README wrote it (session keys unescaped)
    query: str
    status: int
    body: object


def readme_curl_blocks() -> list[str]:
    """The README's shell blocks that call the API, in the order a reader runs them."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.DOTALL)
    return [b for b in blocks if "$URL" in b]


def run_session(live_url: str, key: str, user_key: str, out: Path) -> list[Call]:
    blocks = readme_curl_blocks()
    script = "\n".join(blocks)
    assert SHOWN_URL in script, "the README's session no longer sets URL as this test expects"
    script = script.replace(SHOWN_URL, f"{live_url}/api/v1")
    done = subprocess.run(
        ["bash", "-c", RECORDER + script],
        env={
            "PATH": "/usr/bin:/bin",
            "MEMORYHUB_KEY": key,
            "MEMORYHUB_USER_KEY": user_key,
            "OUT": str(out),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    calls = []
    lines = (out / "calls").read_text().splitlines()
    for n, line in enumerate(lines, start=1):
        method, url, status = line.split(" ")
        parts = urlsplit(url)
        raw = (out / f"{n}.body").read_bytes()
        calls.append(
            Call(
                method=method,
                path=parts.path.removeprefix("/api/v1"),
                query=parts.query,
                status=int(status),
                body=json.loads(raw) if raw else None,
            )
        )
    return calls


# --- the OpenAPI schema: each answer's shape -----------------------------------------------
def operation_for(schema: dict, method: str, path: str) -> tuple[str, dict]:
    """The schema's operation whose path template matches this concrete path."""
    for template, operations in schema["paths"].items():
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template.removeprefix("/api/v1")))
        if re.fullmatch(pattern, path) and method.lower() in operations:
            return template, operations[method.lower()]
    raise AssertionError(f"{method} {path}: no such operation in the OpenAPI schema")


def shape_problems(schema: dict, call: Call) -> list[str]:
    template, operation = operation_for(schema, call.method, call.path)
    answer = operation["responses"].get(str(call.status))
    if answer is None:
        return [f"{call.method} {template}: {call.status} is not a declared answer"]
    if "content" not in answer:  # 204: no body
        return [] if call.body is None else [f"{call.method} {template}: a body with {call.status}"]
    body_schema = answer["content"]["application/json"]["schema"]
    document = {**body_schema, "components": schema["components"]}
    validator = validator_for(document)(document, format_checker=FormatChecker())
    return [
        f"{call.method} {template} {call.status}: {'/'.join(map(str, e.absolute_path))}: "
        f"{e.message[:200]}"
        for e in validator.iter_errors(call.body)
    ]


@pytest.fixture
def session_calls(live_url, key, agent, tmp_path) -> list[Call]:
    if shutil.which("curl") is None:
        pytest.fail("the README test needs curl (.ci/run installs it)", pytrace=False)
    # what `manage.py create_api_key demo --user telegram:77` makes
    user_key = api_key_issue(agent=agent, name="telegram:77's app", user="telegram:77").raw
    return run_session(live_url, key, user_key, tmp_path)


@pytest.fixture
def openapi(live_url) -> dict:
    import httpx

    return httpx.get(f"{live_url}/api/v1/openapi.json").raise_for_status().json()


def test_the_readmes_curl_session_answers_as_documented(session_calls, openapi):
    shown = [(c.method, c.path, c.status) for c in session_calls]
    assert shown == [
        ("POST", "/sessions", 201),
        ("POST", "/sessions/telegram:42/messages", 201),
        ("GET", "/sessions/telegram:42/messages", 200),
        ("GET", "/sessions/telegram:42/window", 200),
        ("POST", "/sessions/telegram:42/messages/pop", 200),
        ("POST", "/errors", 201),
        ("POST", "/sessions/telegram:42/messages", 201),
        ("POST", "/search", 200),
        ("POST", "/memory/save", 200),
        ("POST", "/context", 200),
        ("POST", "/sessions", 201),
        ("POST", "/context", 200),
        ("POST", "/memory/save", 200),
        ("GET", "/facts", 200),
        ("GET", "/facts", 200),
        ("GET", "/facts", 200),
        ("GET", "/facts", 200),
        ("GET", "/facts", 403),
        ("POST", "/sessions/telegram:42/reset", 200),
        ("DELETE", "/sessions/telegram:42", 204),
        ("GET", "/runs", 200),
        ("GET", "/memory/history", 200),
        ("DELETE", "/users/telegram:42", 200),
        ("PATCH", "/agent/settings", 200),
    ]
    problems = [p for call in session_calls for p in shape_problems(openapi, call)]
    assert problems == []
    comments_hold(session_calls)


def comments_hold(session_calls: list[Call]) -> None:
    """What the README's comments say of the answers."""
    by_step = dict(enumerate(session_calls, start=1))
    created, appended, listed, window, popped = (by_step[n].body for n in range(1, 6))
    assert (created["key"], created["user"], created["title"]) == (
        "telegram:42",
        "telegram:42",
        "Support chat",
    )
    assert [m["content"] for m in appended["messages"]] == [
        "My cat is called Whiskerino.",
        "Lovely name! I will remember that.",
    ]
    assert by_step[3].query == "role=user&limit=50"
    assert [(m["role"], m["name"]) for m in listed["items"]] == [("user", "Caroline")]
    assert [m["role"] for m in window["messages"]] == ["user", "assistant"]
    # the pop takes back the newest message: the assistant's
    assert popped["content"] == "Lovely name! I will remember that."

    # the failing tool call gets the remembered strategy as a hint
    hints = [h["text"] for h in by_step[7].body["hints"]]
    assert "apply: pull --rebase then push" in hints
    # the failure answers the assistant's call: a chat OpenAI accepts (issue 41)
    validate(to_openai_messages(by_step[7].body["messages"]))

    # search finds the cat; the fact saved in Caroline's session is hers
    assert any("Whiskerino" in hit["content"] for hit in by_step[8].body["hits"])
    saved = by_step[9].body["fact"]
    assert (saved["value"], saved["user"]) == ("The user's cat is called Whiskerino", "telegram:42")
    assert "Whiskerino" in json.dumps(by_step[10].body)
    # the second person's context never holds Caroline's memory
    assert "Whiskerino" not in json.dumps(by_step[12].body)
    assert by_step[13].body["fact"]["user"] is None  # "scope": "agent": the agent's own
    # without a user, the agent's own facts alone; telegram:77's facts and the agent's:
    # Caroline's cat is not among them; with all_users, every user's
    agents = [("Support answers from 9:00 to 17:00 CET", None)]
    assert (by_step[14].query, by_step[15].query) == ("", "user=telegram:77")
    assert [(f["value"], f["user"]) for f in by_step[14].body["items"]] == agents
    assert [(f["value"], f["user"]) for f in by_step[15].body["items"]] == agents
    assert by_step[16].query == "all_users=1"
    assert sorted((f["value"], f["user"] or "") for f in by_step[16].body["items"]) == [
        ("Support answers from 9:00 to 17:00 CET", ""),
        ("The user's cat is called Whiskerino", "telegram:42"),
    ]

    # the key bound to telegram:77 sees its user's facts and the agent's; naming another
    # user is a 403
    assert (by_step[17].query, by_step[18].query) == ("", "user=telegram:42")
    assert [(f["value"], f["user"]) for f in by_step[17].body["items"]] == agents
    assert by_step[18].body == {
        "detail": "this key acts for user 'telegram:77' only; it may not name another"
    }

    # Caroline's erasure counts what went; the PATCH sets what the README shows
    # (her session was removed just before: its messages went with it)
    assert by_step[23].body == {
        "user": "telegram:42",
        "deleted": {
            "sessions": 0,
            "messages": 0,
            "summaries": 0,
            "facts": 1,
            "fact_versions": 1,
            "entries": 2,
            "entry_aliases": 0,
            "entry_changes": 3,
            "learnings": 0,
            "history": 1,
            "runs": 1,
            # her raw text of the failed git_push: its error record's and its learning's
            "error_details": 2,
            # the agent's fact from her session lost it when the session was removed
            "provenance_cleared": 0,
            "audit_events_cleared": 1,  # the pop of her message named her
        },
        "vacuumed": False,
    }
    settings_now = by_step[24].body["settings"]
    assert (settings_now["max_history_messages"], settings_now["fact_review"]) == (24, True)
