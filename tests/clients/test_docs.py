"""docs/clients.md's examples run as written against the live server, with the URL and the
key from MEMORYHUB_URL and MEMORYHUB_KEY, and print exactly what the page says they print."""

import re
from pathlib import Path

import pytest
from django.conf import settings

DOC = Path(settings.BASE_DIR) / "docs" / "clients.md"
# A python block, then (optionally) "prints" and the block of what it prints.
EXAMPLE = re.compile(r"```python\n(.*?)```(?:\n\nprints\n\n```\n(.*?)```)?", re.DOTALL)


def examples() -> list[tuple[str, str | None]]:
    return [(code, printed) for code, printed in EXAMPLE.findall(DOC.read_text())]


def test_the_page_has_an_example_for_the_client_and_each_adapter():
    codes = [code for code, _ in examples()]
    for module in ("import MemoryHub", ".langchain import", ".langgraph import", ".agents import"):
        assert any(module in code for code in codes), module
    assert all(printed for _, printed in examples()), "every example says what it prints"


@pytest.mark.parametrize("index", range(len(examples())))
def test_the_example_runs_and_prints_what_the_page_says(index, live_url, key, monkeypatch, capsys):
    code, printed = examples()[index]
    monkeypatch.setenv("MEMORYHUB_URL", live_url)
    monkeypatch.setenv("MEMORYHUB_KEY", key)

    exec(compile(code, f"{DOC}[example {index}]", "exec"), {"__name__": "__docs__"})

    assert capsys.readouterr().out == printed
