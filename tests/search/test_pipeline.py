"""The one embedding pipeline: every corpus registered with the search layer gets the same
task, sweep, backlog counts (API, /healthz, admin) and `manage.py reembed`."""

import threading

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import connection
from django.test import Client

from apps.conversations.models import Message
from apps.entries.models import Entry, EntryChange
from apps.facts.models import Category, Fact
from apps.facts.services import fact_save
from apps.search.corpora import Corpus, all_corpora, embedding_corpora, get_corpus, register
from apps.search.services import corpus_embed
from apps.search.tasks import embed_pending_task
from tests.memory.helpers import BROKEN, HASH, use_embedder
from tests.search.conftest import add
from tests.support.llm_server import Embeddings, Gate

NONE = {"embedded": 0, "stale": 0, "pending": 0, "failed": 0, "token_states": None}


def test_the_registered_corpora():
    assert [c.name for c in all_corpora()] == [
        "categories", "entries", "errors", "facts", "history", "learnings", "messages"
    ]  # fmt: skip
    assert [c.name for c in embedding_corpora()] == [
        "categories",
        "entries",
        "errors",
        "facts",
        "history",
        "messages",
    ]
    messages = get_corpus("messages")
    assert (messages.session_field, messages.kind_field, messages.order_fields) == (
        "session", "role", ("created_at", "id"),
    )  # fmt: skip


def test_a_corpus_naming_a_missing_field_is_refused():
    with pytest.raises(ImproperlyConfigured, match="EntryChange has no field named 'embedding'"):
        register(Corpus(name="bad", model=EntryChange, embed=str, embed_fields=("entry_name",)))
    with pytest.raises(ImproperlyConfigured, match="needs embed_fields"):
        register(Corpus(name="bad", model=EntryChange, embed=str))
    with pytest.raises(ImproperlyConfigured, match="'entries' is already registered"):
        register(Corpus(name="entries", model=Entry, text_fields=("content",)))
    assert "bad" not in [c.name for c in all_corpora()]


@pytest.mark.django_db
def test_status_counts_every_corpus_for_the_calling_agent(settings, api, other_api, session):
    # given a message and a fact saved while the embedder is down
    use_embedder(settings, BROKEN)
    add(session, "one")  # its task is queued after commit: pending
    fact_save(agent=session.agent, content="Lives in Berlin", category="profile")

    status = api.get("/search/status").json()

    no_states = {"space": "", "stored": 0, "pending": 0, "error": ""}  # the embedder has none
    assert status["corpora"] == {
        "categories": {"vectors": True, **NONE, "failed": 1},  # "profile"'s name
        "entries": {"vectors": True, **NONE},
        "errors": {"vectors": True, **NONE},
        "facts": {"vectors": True, **NONE, "failed": 1, "token_states": no_states},
        "history": {"vectors": True, **NONE, "token_states": no_states},
        "learnings": {"vectors": False, **NONE},
        "messages": {"vectors": True, **NONE, "pending": 1, "token_states": no_states},
    }
    theirs = other_api.get("/search/status").json()["corpora"]["facts"]
    assert theirs == {"vectors": True, **NONE, "token_states": no_states}


@pytest.mark.django_db
def test_the_beats_sweep_of_an_agent_stops_at_its_row_limit_and_the_next_takes_the_rest(
    settings, session
):
    settings.MEMORYHUB_EMBEDDING_SWEEP_LIMIT = 2
    use_embedder(settings, BROKEN)
    add(session, "one", "two", "three")
    for text in ("Lives in Berlin", "Likes jazz", "Plays chess"):
        fact_save(agent=session.agent, content=text, category="profile")
    use_embedder(settings, HASH)

    # the beat looks at two rows per corpus: two messages, two facts, the one category
    assert embed_pending_task() == 5

    # the agent's sweep stopped after the batch that reached 2 rows: the category's (1 row),
    # then the facts' (3); the messages wait for the next sweep
    assert Category.objects.filter(embedding__isnull=True).count() == 0
    assert Fact.objects.filter(embedding__isnull=True).count() == 0
    assert Message.objects.filter(embedding__isnull=True).count() == 3
    assert embed_pending_task() == 2
    assert Message.objects.filter(embedding__isnull=True).count() == 0
    assert embed_pending_task() == 0


@pytest.mark.django_db(transaction=True)
def test_a_row_edited_while_it_is_embedded_keeps_its_new_texts_turn(settings, llm_server, agent):
    # given a fact without a vector, and a server holding the pipeline's request
    use_embedder(settings, BROKEN)
    fact = fact_save(agent=agent, content="Lives in Berlin", category="profile").fact
    settings.MEMORYHUB_PROVIDERS = {
        "embedding": {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {"URL": llm_server.url, "MODEL": "remote-embed", "DIMENSIONS": 384},
        },
        "llm": None,
    }
    gate = Gate(then=Embeddings([[1.0] + [0.0] * 383]))
    llm_server.script(gate)
    result = {}

    def embed() -> None:
        try:
            result["r"] = corpus_embed(corpus="facts", ids=[fact.pk])
        finally:
            connection.close()

    thread = threading.Thread(target=embed)
    thread.start()
    assert gate.entered.wait(10)

    # when the fact's text changes before the vector of the old text comes back
    Fact.objects.filter(pk=fact.pk).update(value="Lives in Hamburg")
    gate.open()
    thread.join(30)

    # then the old text's vector is not written
    assert (result["r"].embedded, result["r"].skipped) == (0, 1)
    fact.refresh_from_db()
    assert (fact.embedding, fact.embedding_model) == (None, "")


@pytest.mark.django_db
def test_reembed_one_corpus(settings, session, capsys):
    use_embedder(settings, BROKEN)
    add(session, "one")
    fact_save(agent=session.agent, content="Lives in Berlin", category="profile")
    use_embedder(settings, HASH)

    call_command("reembed", "--corpus", "facts")

    assert capsys.readouterr().out == "re-embedded 1 facts with fake-hash@384, 0 failed\n"
    assert Fact.objects.get().embedding_model == "fake-hash@384"
    assert Message.objects.get().embedding_model == ""
    assert Category.objects.get().embedding_model == ""

    call_command("reembed")

    assert capsys.readouterr().out == (
        "re-embedded 1 categories with fake-hash@384, 0 failed\n"
        "re-embedded 0 entries with fake-hash@384, 0 failed\n"
        "re-embedded 0 errors with fake-hash@384, 0 failed\n"
        "re-embedded 0 facts with fake-hash@384, 0 failed\n"
        "re-embedded 0 history with fake-hash@384, 0 failed\n"
        "re-embedded 1 messages with fake-hash@384, 0 failed\n"
    )


@pytest.mark.django_db
def test_healthz_and_the_admin_index_show_the_backlog(settings, session):
    use_embedder(settings, BROKEN)
    add(session, "one", "two")
    fact_save(agent=session.agent, content="Lives in Berlin", category="profile")
    use_embedder(settings, HASH)

    health = Client().get("/healthz").json()
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    index = client.get("/admin/").content.decode()

    assert health["embedding_backlog"] == {
        "categories": {"pending": 0, "failed": 1},
        "entries": {"pending": 0, "failed": 0},
        "errors": {"pending": 0, "failed": 0},
        "facts": {"pending": 0, "failed": 1},
        "history": {"pending": 0, "failed": 0},
        "messages": {"pending": 2, "failed": 0},
    }
    assert health["status"] == "ok"  # a backlog is work to do, not an outage
    assert ('<tr data-corpus="facts"><th scope="row">facts</th><td>0</td><td>1</td></tr>') in index
    assert (
        '<tr data-corpus="messages"><th scope="row">messages</th><td>2</td><td>0</td></tr>'
    ) in index
