"""Without a model, memory://MEMORY.md is there after the first consolidation (issue 23,
point 5): the user's first-person statements, as the API gives the file."""

import pytest

from tests.lifecycle.helpers import add

pytestmark = pytest.mark.django_db(transaction=True)


def test_memory_md_is_served_after_the_first_consolidation_without_a_model(
    connect, key, api, session
):
    add(session, "I moved to Berlin in March.", "Lovely.", "ok thanks", "Bye.", role=None)
    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]
    mcp = connect(key)

    memory = mcp.read("memory://MEMORY.md")

    assert (run["status"], run["reason"]) == ("fallback", "not_configured")
    assert [(str(c.uri), c.mime_type, c.text) for c in memory] == [
        ("memory://MEMORY.md", "text/markdown", "# Memory\n\n- I moved to Berlin in March.\n")
    ]
    assert memory[0].text == api.get("/entries/MEMORY.md").json()["content"]
