"""Seed 001's learnings: the API, injection into get_context, corrections from
consolidation, the workspace round trip, and the move of the old learnings entries."""

import importlib
import io
import json
import tarfile
from datetime import UTC, datetime

import pytest
from django.apps import apps as django_apps

from apps.entries.models import Entry, EntryChange
from apps.learnings.models import Learning
from apps.learnings.services import learning_create
from tests.lifecycle.helpers import add, use_llm
from tests.support.llm_server import Completion

pytestmark = pytest.mark.django_db


def test_add_list_edit_approve_archive_delete(api, session):
    made = api.post(
        "/learnings",
        {
            "kind": "correction",
            "content": "Call me Sam, not Samuel.",
            "source": "user",
            "session_id": "chat-1",
        },
    )
    learning = made.json()

    assert made.status_code == 201
    assert {k: learning[k] for k in ("kind", "content", "source", "status", "session_key")} == {
        "kind": "correction",
        "content": "Call me Sam, not Samuel.",
        "source": "user",
        "status": "active",
        "session_key": "chat-1",
    }
    edited = api.patch(f"/learnings/{learning['id']}", {"content": "Call me Sam."}).json()
    archived = api.patch(f"/learnings/{learning['id']}", {"status": "archived"}).json()
    listed = api.get("/learnings", {"kind": "correction", "status": "archived"}).json()
    assert (edited["content"], archived["status"]) == ("Call me Sam.", "archived")
    assert [row["id"] for row in listed["items"]] == [learning["id"]]
    assert api.delete(f"/learnings/{learning['id']}").status_code == 204
    assert api.get(f"/learnings/{learning['id']}").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "rule", "content": "x"}, "kind"),
        ({"kind": "error", "content": " "}, "content"),
        ({"kind": "error", "content": "x", "source": "consolidation"}, "source"),
    ],
)
def test_bad_learnings_are_422(api, body, field):
    response = api.post("/learnings", body)

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == field
    assert Learning.objects.count() == 0


def test_active_learnings_are_in_every_get_context(api, agent, session):
    learning_create(agent=agent, kind="correction", content="The user prefers metric units.")
    learning_create(agent=agent, kind="error", content="grep fails on binary files: use -a")
    learning_create(agent=agent, kind="correction", content="Pending one", source="consolidation")
    learning_create(agent=agent, kind="correction", content="Old one", status="archived")

    parts = api.post("/context", {"session_id": str(session.id)}).json()["system"]["parts"]

    assert [(p["kind"], p["name"], p["content"]) for p in parts] == [
        ("learnings", "learnings/corrections.md", "- The user prefers metric units."),
        ("learnings", "learnings/errors.md", "- grep fails on binary files: use -a"),
    ]


@pytest.mark.parametrize(("fact_review", "status"), [(False, "active"), (True, "pending")])
def test_consolidation_records_corrections_active_unless_fact_review_is_on(
    api, agent, session, settings, llm_server, fact_review, status
):
    agent.settings = {"fact_review": fact_review}
    agent.save()
    use_llm(settings, llm_server)
    add(session, "No, I live in Lyon, not Paris.", "Noted.", role=None)
    llm_server.script(
        Completion(
            json.dumps(
                {
                    "history_entry": "[2026-01-05 09:00] The user corrected their city.",
                    "memory_update": "- lives in Lyon",
                    "corrections": ["The user lives in Lyon, not Paris.", "  ", 7],
                }
            )
        )
    )

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert run["details"]["corrections"] == 1
    [learning] = Learning.objects.all()
    assert (learning.kind, learning.content, learning.source, learning.status) == (
        "correction",
        "The user lives in Lyon, not Paris.",
        "consolidation",
        status,
    )
    assert (learning.session_id, learning.session_key) == (session.id, "chat-1")
    # seed 001: an active correction is in every get_context; a pending one waits
    parts = api.post("/context", {"session_id": str(session.id)}).json()["system"]["parts"]
    injected = [p["content"] for p in parts if p["name"] == "learnings/corrections.md"]
    assert injected == (["- The user lives in Lyon, not Paris."] if status == "active" else [])
    prompt = llm_server.chats[0].body["messages"][-1]["content"]
    assert '"corrections": (optional) a list of the corrections and preferences' in prompt


def _members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def _upload(api, data):
    return api.client.post(
        "/api/v1/workspace/import", data, content_type="application/gzip", headers=api._headers()
    )


def test_a_workspace_round_trip_keeps_every_learning(api, other_api, agent, other_agent, session):
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    learning_create(
        agent=agent,
        kind="error",
        content="grep fails on binary files\nuse -a",
        session_key="chat-1",
    )
    learning_create(
        agent=agent,
        kind="correction",
        content="Metric units.",
        status="pending",
        source="consolidation",
    )
    learning_create(agent=agent, kind="correction", content="Old.", status="archived")
    Learning.objects.update(created_at=at)

    exported = api.get("/workspace/export").content
    imported = _upload(other_api, exported)

    files = _members(exported)
    assert files["learnings/errors.md"].decode() == (
        "# Learnings: errors\n\n## 2026-01-02T03:04:05.678901Z\n"
        "<!-- source: agent; status: active; session: chat-1 -->\n\n"
        "grep fails on binary files\nuse -a\n\n"
    )
    assert imported.json()["learnings"] == 3
    fields = ("kind", "content", "source", "status", "session_key", "created_at")
    mine = sorted(Learning.objects.filter(agent=agent).values_list(*fields))
    theirs = sorted(Learning.objects.filter(agent=other_agent).values_list(*fields))
    assert theirs == mine
    assert other_api.get("/workspace/export").content == exported
    assert _upload(other_api, exported).status_code == 201  # nothing doubled on a second load
    assert Learning.objects.filter(agent=other_agent).count() == 3


def test_the_old_learnings_entries_become_learnings(agent):
    # given the learnings files as Note entries, as before learnings had their own model
    Entry.objects.create(
        agent=agent,
        name="learnings/corrections.md",
        content="# Corrections\n\n- Call me Sam.\n* Metric units.\n",
    )
    Entry.objects.create(agent=agent, name="learnings/errors.md", content="grep needs -a")
    migration = importlib.import_module("apps.learnings.migrations.0003_learnings_from_entries")

    migration.forwards(django_apps, None)

    assert sorted(Learning.objects.values_list("kind", "content")) == [
        ("correction", "Call me Sam."),
        ("correction", "Metric units."),
        ("error", "grep needs -a"),
    ]
    assert not Entry.objects.filter(name__startswith="learnings/").exists()
    assert sorted(EntryChange.objects.values_list("entry_name", "previous_content")) == [
        ("learnings/corrections.md", "# Corrections\n\n- Call me Sam.\n* Metric units.\n"),
        ("learnings/errors.md", "grep needs -a"),
    ]


def test_a_hand_written_learnings_file_is_read_item_by_item(api, agent):
    from tests.entries.test_workspace import tar_gz

    data = tar_gz({"learnings/corrections.md": b"# Mine\n\n- Metric units.\n* Call me Sam.\n"})

    response = _upload(api, data)

    assert response.json()["learnings"] == 2
    assert sorted(Learning.objects.values_list("kind", "content", "status", "source")) == [
        ("correction", "Call me Sam.", "active", "agent"),
        ("correction", "Metric units.", "active", "agent"),
    ]
