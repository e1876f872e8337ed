"""get_context's system part as a model reads it (issue 40, point 5): each part carries a
plain `title`, and the prompt the client builds from it (memoryhub_client.chat) puts each
part under that title, never under a file path ("## users/bruno/MEMORY.md")."""

import re

import pytest
from memoryhub_client.chat import to_openai_messages

from apps.memory.context.titles import part_title

pytestmark = pytest.mark.django_db(transaction=True)


def _ok(response, status=200) -> dict:
    assert response.status_code == status, response.content
    return response.json()


def test_each_part_has_a_plain_title_and_the_prompt_uses_it(api):
    for body in (
        {"name": "SOUL.md", "content": "You are a patient travel agent."},
        {"name": "MEMORY.md", "content": "- Trains are booked a week ahead."},
        {"name": "USER.md", "content": "Bruno travels for work.", "user": "bruno"},
        {"name": "MEMORY.md", "content": "- Bruno likes aisle seats.", "user": "bruno"},
    ):
        _ok(api.post("/entries", body), 201)
    session = _ok(api.post("/sessions", {"key": "trip", "user": "bruno"}), 201)
    for kind, content in (
        ("error", "book_ticket needs a date"),
        ("correction", "Porto, not Oporto"),
    ):
        body = {"kind": kind, "content": content, "session_id": session["id"]}
        _ok(api.post("/learnings", body), 201)

    context = _ok(api.post("/context", {"session_id": session["id"]}))

    parts = [(p["kind"], p["name"], p["title"]) for p in context["system"]["parts"]]
    assert parts == [
        ("document", "SOUL.md", "Who you are"),
        ("document", "users/bruno/USER.md", "About bruno"),
        ("document", "MEMORY.md", "Agent memory"),
        ("document", "users/bruno/MEMORY.md", "What you know about bruno"),
        ("learnings", "learnings/corrections.md", "Corrections to keep"),
        ("learnings", "learnings/errors.md", "Lessons from past errors"),
    ]
    [system, *_] = to_openai_messages(context)
    assert re.findall(r"^## .*$", system["content"], re.M) == [
        "## Who you are",
        "## About bruno",
        "## Agent memory",
        "## What you know about bruno",
        "## Corrections to keep",
        "## Lessons from past errors",
    ]
    assert "## What you know about bruno\n- Bruno likes aisle seats.\n\n" in system["content"]


@pytest.mark.parametrize(
    ("kind", "name", "title"),
    [
        ("document", "AGENTS.md", "Your instructions"),
        ("document", "team/AGENTS.md", "Your team's instructions"),
        ("document", "USER.md", "About your users"),
        (
            "document",
            "users/whatsapp:+351911222333/MEMORY.md",
            "What you know about whatsapp:+351911222333",
        ),
        ("summary", "summary", "Summary of the conversation so far"),
        ("recap", "recap", "Recap of the messages before these"),
        ("hints", "hints/book_ticket", "Past failures of book_ticket"),
        ("document", "users/bruno/NOTES.md", "users/bruno/NOTES.md"),  # unknown: its name
        ("document", "notes/plan.md", "notes/plan.md"),
    ],
)
def test_part_title(kind, name, title):
    assert part_title(kind, name) == title
