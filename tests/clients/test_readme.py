"""The client README's example runs as written against the live server, with the URL and
the key from MEMORYHUB_URL and MEMORYHUB_KEY."""

import re
from pathlib import Path

from django.conf import settings
from memoryhub_client import MemoryHub

README = Path(settings.BASE_DIR) / "clients" / "python" / "README.md"


def test_the_readme_example_runs_with_the_url_and_key_from_the_environment(
    live_url, key, monkeypatch, capsys
):
    (example,) = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    monkeypatch.setenv("MEMORYHUB_URL", live_url)
    monkeypatch.setenv("MEMORYHUB_KEY", key)

    exec(compile(example, str(README), "exec"), {})

    assert capsys.readouterr().out == "user I moved to Lisbon.\n"


def test_the_url_defaults_to_a_local_server_and_may_end_in_the_api_prefix(monkeypatch):
    monkeypatch.delenv("MEMORYHUB_URL", raising=False)
    monkeypatch.setenv("MEMORYHUB_KEY", "mh_from-env")
    with MemoryHub() as local, MemoryHub("https://memory.example/api/v1/") as prefixed:
        headers = local._transport.client.headers

    assert (local.url, prefixed.url) == ("http://127.0.0.1:8000", "https://memory.example")
    assert headers["Authorization"] == "Bearer mh_from-env"
