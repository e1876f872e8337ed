"""Resources: memory://MEMORY.md and the other workspace documents, memory://HISTORY.md and
memory://HISTORY/{YYYY-MM}, read with exactly the content the API gives for them."""

from datetime import UTC, datetime

import pytest

from apps.lifecycle.models import HistoryEntry

pytestmark = pytest.mark.django_db(transaction=True)

MEMORY = "# Memory\n\n- The user's cat is called Whiskerino.\n"


@pytest.fixture
def workspace(api, agent):
    api.post("/entries", {"name": "MEMORY.md", "content": MEMORY})
    api.post("/entries", {"name": "SOUL.md", "content": "You are kind."})
    api.post("/entries", {"name": "notes/cat.md", "content": "not a document"})
    for at, content in [
        (datetime(2026, 1, 31, 23, 0, 0, 123456, tzinfo=UTC), "First."),
        (datetime(2026, 2, 1, tzinfo=UTC), "Second."),
    ]:
        HistoryEntry.objects.create(
            agent=agent, session_key="chat-1", created_at=at, content=content, kind="ok"
        )


def test_list_the_documents_history_and_templates(connect, key, workspace):
    mcp = connect(key)

    listed = {str(r.uri): (r.name, r.mime_type) for r in mcp.resources()}
    templates = {t.uri_template for t in mcp.templates()}

    assert listed == {
        "memory://MEMORY.md": ("MEMORY.md", "text/markdown"),
        "memory://SOUL.md": ("SOUL.md", "text/markdown"),
        "memory://HISTORY.md": ("HISTORY.md", "text/markdown"),
    }
    assert "memory://HISTORY/{month}" in templates


def test_read_memory_md_and_a_history_month(connect, key, workspace, api):
    mcp = connect(key)

    memory = mcp.read("memory://MEMORY.md")
    january = mcp.read("memory://HISTORY/2026-01")
    every = mcp.read("memory://HISTORY.md")

    assert [(str(c.uri), c.mime_type, c.text) for c in memory] == [
        ("memory://MEMORY.md", "text/markdown", MEMORY)
    ]
    assert memory[0].text == api.get("/entries/MEMORY.md").json()["content"]
    assert [c.text for c in january] == [
        "# History 2026-01\n\n## 2026-01-31T23:00:00.123Z\n<!-- session: chat-1 -->\n\nFirst.\n\n"
    ]
    assert (
        january[0].text
        == (api.get("/memory/history/files/memory/HISTORY-2026-01.md").json()["content"])
    )
    assert [c.text for c in every] == [
        api.get("/memory/history/files/memory/HISTORY.md").json()["content"]
    ]
    assert "Second." in every[0].text


def test_a_document_written_through_a_tool_is_read_back(connect, key):
    mcp = connect(key)
    mcp.result("entry_add", {"name": "USER.md", "content": "Caroline, likes cats."})

    assert [c.text for c in mcp.read("memory://USER.md")] == ["Caroline, likes cats."]
