"""Seed 004: MEMORY.md over max_memory_bytes is compressed at once. Every write through the
entries API queues a compression run (sent by task name, run inline here); the loopback
model answers over real HTTP. The text it replaces stays in the entry's change log."""

import json

import pytest
from django.core.cache import cache

from apps.core.tasknames import compress_debounce_key
from apps.entries.models import Entry, EntryChange
from apps.entries.services import entry_add
from apps.lifecycle import tasks
from apps.lifecycle.models import Run
from tests.lifecycle.helpers import use_llm
from tests.support.llm_server import Completion, Delay, Reply, Status

pytestmark = pytest.mark.django_db

LIMIT = 200
BIG = "# Memory\n" + "".join(
    f"- fact {n}: the user mentioned detail number {n}\n" for n in range(6)
)
SMALL = "# Memory\n- the user mentioned details 0 to 5"
STILL_BIG = "# Memory\n" + "".join(f"- fact {n}: detail number {n}\n" for n in range(8))


def _given(agent, settings, llm_server):
    use_llm(settings, llm_server)
    agent.settings = {"max_memory_bytes": LIMIT, "consolidation_timeout_seconds": 1}
    agent.save()


def _memory(agent) -> Entry:
    return Entry.objects.get(agent=agent, name="MEMORY.md")


def _answer(memory: str) -> Completion:
    return Completion(json.dumps({"memory": memory}))


def _write(api, agent, how: str, content: str, capture):
    """Write MEMORY.md the way `how` says, running what its commit sets off."""
    if how == "PUT":
        entry_add(agent=agent, name="MEMORY.md", content="# Memory\n")
    if how == "PATCH":
        entry_add(agent=agent, name="draft.md", content=content)
    with capture(execute=True):
        if how == "POST":
            response = api.post("/entries", {"name": "MEMORY.md", "content": content})
        elif how == "PUT":
            response = api.client.put(
                "/api/v1/entries/MEMORY.md",
                json.dumps({"content": content}),
                content_type="application/json",
                headers=api._headers(),
            )
        else:
            response = api.patch("/entries/draft.md", {"name": "MEMORY.md"})
    assert response.status_code in (200, 201)


def test_sizes_of_the_fixtures():
    assert (len(BIG.encode()), len(SMALL.encode()) + 1, len(STILL_BIG.encode())) == (279, 45, 217)


@pytest.mark.parametrize("how", ["POST", "PUT", "PATCH"])
def test_a_write_over_the_limit_is_compressed_at_once(
    api, agent, settings, llm_server, django_capture_on_commit_callbacks, how
):
    _given(agent, settings, llm_server)
    llm_server.script(_answer(SMALL))

    _write(api, agent, how, BIG, django_capture_on_commit_callbacks)

    memory = _memory(agent)
    assert (memory.content, memory.needs_compression) == (SMALL + "\n", False)
    version = EntryChange.objects.filter(entry=memory).order_by("-id").first()
    assert (version.changed_by, version.action, version.previous_content, version.detail) == (
        "compression",
        "write",
        BIG,
        "compressed: over 200 bytes",
    )
    [run] = Run.objects.filter(agent=agent)
    assert (run.kind, run.trigger, run.status, run.reason, run.parse_tier) == (
        "compress",
        "auto",
        "ok",
        "",
        1,
    )
    assert (run.session_id, run.session_key, run.output) == (
        None,
        "",
        json.dumps({"memory": SMALL}),
    )
    assert run.details == {
        "memory": "updated",
        "bytes_before": 279,
        "bytes_after": 45,
        "max_memory_bytes": 200,
        "previous_version": version.pk,
    }
    [chat] = llm_server.chats
    text = chat.body["messages"][-1]["content"]
    assert text.startswith(
        "The agent's long-term memory below is 279 bytes, over its limit of 200 bytes. "
        "Rewrite it in under 200 bytes:"
    )
    assert "prune stale or low-value facts" in text
    assert f"## Current Long-term Memory\n{BIG.strip()}\n\nReturn only the JSON object." in text
    listed = api.get("/runs", {"kind": "compress"}).json()["items"]
    assert [(r["id"], r["kind"], r["status"]) for r in listed] == [(run.pk, "compress", "ok")]


def test_a_write_at_or_under_the_limit_queues_nothing(
    api, agent, settings, llm_server, django_capture_on_commit_callbacks
):
    _given(agent, settings, llm_server)
    at_limit = "x" * LIMIT

    _write(api, agent, "PUT", at_limit, django_capture_on_commit_callbacks)

    assert (_memory(agent).content, _memory(agent).needs_compression) == (at_limit, False)
    assert list(Run.objects.filter(agent=agent)) == []
    assert llm_server.chats == []
    assert tasks.compress_due_task() == 0


BAD = {
    "garbage": (Completion("I am sorry, I cannot do that."), "unparseable", None),
    "empty memory": (_answer("  "), "unparseable", 1),
    "not smaller": (_answer(BIG + "- one more\n"), "not_smaller", 1),
    "HTTP 500": (Status(500, "upstream exploded"), "error", None),
    "slower than the timeout": (Delay(3, then=_answer(SMALL)), "timeout", None),
}


@pytest.mark.parametrize("answer", list(BAD))
def test_a_bad_answer_leaves_memory_md_untouched_and_is_not_retried(
    api, agent, settings, llm_server, django_capture_on_commit_callbacks, answer
):
    item, reason, tier = BAD[answer]
    _given(agent, settings, llm_server)
    settings.MEMORYHUB_LLM_BACKGROUND_TIMEOUT = 1  # the write's compression runs in the background
    llm_server.script(item)

    _write(api, agent, "PUT", BIG, django_capture_on_commit_callbacks)

    assert (_memory(agent).content, _memory(agent).needs_compression) == (BIG, True)
    [run] = Run.objects.filter(agent=agent)
    assert (run.kind, run.status, run.reason, run.parse_tier) == (
        "compress",
        "fallback",
        reason,
        tier,
    )
    assert run.details == {"memory": "unchanged", "bytes_before": 279, "max_memory_bytes": 200}
    if answer == "HTTP 500":
        assert run.error.endswith("/v1/chat/completions: upstream exploded")
    if answer == "slower than the timeout":
        assert run.error == "no answer within 1 s"
    # No hot loop: the beat does not retry a run that failed; the next write does.
    assert tasks.compress_due_task() == 0
    assert (Run.objects.filter(agent=agent).count(), len(llm_server.chats)) == (1, 1)


def test_without_an_llm_nothing_changes_and_the_run_says_not_configured(
    api, agent, settings, django_capture_on_commit_callbacks
):
    settings.MEMORYHUB_PROVIDERS = {
        "embedding": {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}},
        "llm": None,
    }
    agent.settings = {"max_memory_bytes": LIMIT}
    agent.save()

    _write(api, agent, "POST", BIG, django_capture_on_commit_callbacks)

    assert _memory(agent).content == BIG
    assert [
        (r.kind, r.status, r.reason, r.error, r.details["memory"]) for r in Run.objects.all()
    ] == [("compress", "fallback", "not_configured", "no LLM is configured", "unchanged")]
    assert EntryChange.objects.filter(entry=_memory(agent)).count() == 1  # the add only


def test_a_result_still_over_the_limit_is_not_compressed_again_in_a_loop(
    api, agent, settings, llm_server, django_capture_on_commit_callbacks
):
    _given(agent, settings, llm_server)
    llm_server.script(_answer(STILL_BIG.strip()))

    _write(api, agent, "PUT", BIG, django_capture_on_commit_callbacks)

    # Its own write queued another run, which found compression wrote last and did nothing.
    assert (_memory(agent).content, _memory(agent).needs_compression) == (STILL_BIG, True)
    assert [(r.status, r.details["bytes_after"]) for r in Run.objects.filter(agent=agent)] == [
        ("ok", 217)
    ]
    assert len(llm_server.chats) == 1
    assert tasks.compress_due_task() == 0


def test_the_beat_compresses_a_write_whose_task_was_never_sent(api, agent, settings, llm_server):
    _given(agent, settings, llm_server)
    llm_server.script(_answer(SMALL))
    # Outside a captured commit, the write's on_commit send never happens (a broker outage).
    assert api.post("/entries", {"name": "MEMORY.md", "content": BIG}).status_code == 201
    assert llm_server.chats == []

    assert tasks.compress_due_task() == 1

    assert _memory(agent).content == SMALL + "\n"
    assert [(r.trigger, r.status) for r in Run.objects.filter(agent=agent)] == [("beat", "ok")]
    assert tasks.compress_due_task() == 0


@pytest.mark.django_db(transaction=True)
def test_a_memory_md_written_during_the_call_is_not_overwritten(api, agent, settings, llm_server):
    _given(agent, settings, llm_server)

    def agent_writes_meanwhile(body):
        from django.db import connection

        Entry.objects.filter(agent=agent, name="MEMORY.md").update(content="# Mine\n")
        connection.close()  # the server thread's own connection
        return _answer(SMALL)

    llm_server.script(Reply(agent_writes_meanwhile))

    # Committed for real: the write's on_commit runs the compression inline.
    assert api.post("/entries", {"name": "MEMORY.md", "content": BIG}).status_code == 201

    assert _memory(agent).content == "# Mine\n"
    [run] = Run.objects.filter(agent=agent)
    assert (run.kind, run.status, run.reason, run.output) == (
        "compress",
        "skipped",
        "superseded",
        json.dumps({"memory": SMALL}),
    )
    assert run.details == {"memory": "conflict", "bytes_before": 279, "max_memory_bytes": 200}
    assert [c.changed_by for c in EntryChange.objects.filter(agent=agent)] == ["agent"]


@pytest.fixture
def broker_down():
    """The Celery app publishing for real to a port nothing listens on."""
    from bench._http import free_port
    from memoryhub.celery import app

    def forget_connections():  # the pools were built for the old URL
        app._pool = None
        app.amqp._producer_pool = None

    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_write_url")}
    app.conf.update(task_always_eager=False, broker_write_url=f"redis://127.0.0.1:{free_port()}/0")
    forget_connections()
    yield
    app.conf.update(saved)
    forget_connections()


def test_a_broker_outage_fails_no_write_and_the_beat_compresses_later(
    api, agent, settings, llm_server, django_capture_on_commit_callbacks, broker_down
):
    from memoryhub.celery import app

    _given(agent, settings, llm_server)
    llm_server.script(_answer(SMALL))

    _write(api, agent, "POST", BIG, django_capture_on_commit_callbacks)

    assert (_memory(agent).content, _memory(agent).needs_compression) == (BIG, True)
    assert (list(Run.objects.all()), llm_server.chats) == ([], [])
    assert cache.get(compress_debounce_key(agent.pk)) is None  # not sent: the next write tries
    app.conf.update(task_always_eager=True)  # the broker is back: the beat's task runs inline
    assert tasks.compress_due_task() == 1
    assert _memory(agent).content == SMALL + "\n"
