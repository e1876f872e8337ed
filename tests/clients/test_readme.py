"""The client README's example runs as written against the live server, with the URL and
the key from MEMORYHUB_URL and MEMORYHUB_KEY."""

import re
from pathlib import Path

from django.conf import settings
from memoryhub_client import MemoryHub

from apps.agents.services import api_key_issue
from tests.support.openai_chat import problems

README = Path(settings.BASE_DIR) / "clients" / "python" / "README.md"
PROJECT_README = Path(settings.BASE_DIR) / "README.md"


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


def test_the_readme_example_runs_with_the_url_and_key_from_the_environment(
    live_url, key, monkeypatch, capsys
):
    (example,) = python_blocks(README)
    monkeypatch.setenv("MEMORYHUB_URL", live_url)
    monkeypatch.setenv("MEMORYHUB_KEY", key)

    exec(compile(example, str(README), "exec"), {})

    assert capsys.readouterr().out == "user I moved to Lisbon.\n"


def test_the_project_readmes_from_python_example_runs_and_its_chat_is_sendable(
    live_url, agent, key, monkeypatch, capsys
):
    (example,) = python_blocks(PROJECT_README)
    monkeypatch.setenv("MEMORYHUB_URL", live_url)
    monkeypatch.setenv("MEMORYHUB_KEY", key)
    # The key `manage.py create_api_key demo --user telegram:42` makes.
    user_key = api_key_issue(agent=agent, name="telegram:42's app", user="telegram:42").raw
    monkeypatch.setenv("MEMORYHUB_USER_KEY", user_key)
    scope: dict = {}

    exec(compile(example, str(PROJECT_README), "exec"), scope)

    assert capsys.readouterr().out == (
        "user I moved to Lisbon in May.\n[]\n['I moved to Lisbon in May.']\n403\n"
    )
    assert scope["chat"] == [{"role": "user", "content": "I moved to Lisbon in May."}]
    assert problems(scope["chat"]) == []
    with MemoryHub(live_url, key) as hub:
        assert hub.sessions.get("trip").user == "telegram:42"


def test_the_url_defaults_to_a_local_server_and_may_end_in_the_api_prefix(monkeypatch):
    monkeypatch.delenv("MEMORYHUB_URL", raising=False)
    monkeypatch.setenv("MEMORYHUB_KEY", "mh_from-env")
    with MemoryHub() as local, MemoryHub("https://memory.example/api/v1/") as prefixed:
        headers = local._transport.client.headers

    assert (local.url, prefixed.url) == ("http://127.0.0.1:8000", "https://memory.example")
    assert headers["Authorization"] == "Bearer mh_from-env"
