"""Token states: kept when a message is embedded, gone with it, backfilled for messages embedded
before, counted in /search/status. The test embedder (HashEmbedder) keeps one hashed row per
word; the real MiniLM's projection is tested in tests/search/test_rerank.py."""

import numpy as np
import pytest
from django.core.management import call_command

from apps.conversations.models import Message, MessageTokens
from apps.providers.embeddings.fake import TOKEN_DIMS, _words
from apps.providers.embeddings.token_embedder import quantise
from apps.search.services import corpus_embed
from apps.search.tasks import embed_pending_task
from tests.memory.helpers import BROKEN, use_embedder
from tests.search.conftest import add

pytestmark = pytest.mark.django_db

SPACE = f"fake-hash/words{TOKEN_DIMS}@int8"
NO_EMBEDDER_STATES = {"space": "", "stored": 0, "pending": 0, "error": ""}
NO_ROWS_STATES = {"space": SPACE, "stored": 0, "pending": 0, "error": ""}


def _codes(row: MessageTokens) -> np.ndarray:
    return np.frombuffer(bytes(row.codes), dtype=np.int8).reshape(row.count, -1)


def _forget_states(messages) -> None:
    """As messages embedded before token states existed."""
    MessageTokens.objects.filter(message__in=messages).delete()


def test_states_are_written_when_a_message_is_embedded(session, embed_now):
    with embed_now():
        [one, two] = add(session, "Caroline moved from Sweden", "ok", name="Ann")

    rows = {r.message_id: r for r in MessageTokens.objects.all()}
    assert sorted(rows) == sorted([one.pk, two.pk])
    assert (rows[one.pk].space, rows[one.pk].count) == (SPACE, 5)  # "Ann: Caroline moved ..."
    assert np.array_equal(_codes(rows[one.pk]), quantise(_words("Ann: Caroline moved from Sweden")))
    assert (rows[two.pk].count, _codes(rows[two.pk]).shape) == (2, (2, TOKEN_DIMS))


def test_states_go_with_their_message(api, session, embed_now):
    with embed_now():
        add(session, "one", "two")
    other = session.agent.sessions.create(key="chat-2")
    with embed_now():
        [kept] = add(other, "three")

    response = api.delete(f"/sessions/{session.id}")

    assert response.status_code == 204
    assert list(MessageTokens.objects.values_list("message_id", flat=True)) == [kept.pk]


def test_a_reset_counts_messages_not_their_states(api, session, embed_now):
    with embed_now():
        add(session, "one", "two", "three")

    response = api.post(f"/sessions/{session.id}/reset")

    assert response.status_code == 200, response.content
    assert response.json()["deleted_messages"] == 3
    assert MessageTokens.objects.count() == 0


def test_messages_embedded_before_get_their_states_from_the_sweep(api, session, embed_now):
    # given: three embedded messages, two of them from before token states were kept
    with embed_now():
        rows = add(session, "alpha beta", "gamma", "delta epsilon zeta")
    _forget_states(rows[:2])
    before = api.get("/search/status").json()

    # when
    with embed_now():
        enqueued = embed_pending_task()

    # then
    after = api.get("/search/status").json()
    assert before["token_states"] == {"space": SPACE, "stored": 1, "pending": 2, "error": ""}
    assert enqueued == 2
    assert after["token_states"] == {"space": SPACE, "stored": 3, "pending": 0, "error": ""}
    assert after["corpora"]["messages"]["token_states"] == after["token_states"]
    assert sorted(MessageTokens.objects.values_list("count", flat=True)) == [1, 2, 3]
    assert Message.objects.filter(embedding_attempts__gt=0).count() == 0


def test_reembed_backfills_states_too(session, embed_now):
    with embed_now():
        rows = add(session, "alpha beta", "gamma")
    _forget_states(rows)

    call_command("reembed", "--corpus", "messages", stdout=open("/dev/null", "w"))  # noqa: SIM115

    assert MessageTokens.objects.count() == 2


def test_status_counts_per_agent_and_ignores_rows_without_vectors(
    settings, api, other_api, session, embed_now
):
    with embed_now():
        add(session, "embedded one", "embedded two")
    use_embedder(settings, BROKEN)
    add(session, "waiting")  # no vector: it is in the vector backlog, not the token one
    settings.MEMORYHUB_PROVIDERS = {
        "embedding": {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}},
        "llm": None,
    }

    mine = api.get("/search/status").json()
    theirs = other_api.get("/search/status").json()

    assert (mine["embedded"], mine["pending"]) == (2, 1)
    assert mine["token_states"] == {"space": SPACE, "stored": 2, "pending": 0, "error": ""}
    assert theirs["token_states"] == {"space": SPACE, "stored": 0, "pending": 0, "error": ""}
    assert mine["corpora"]["facts"]["token_states"] == NO_ROWS_STATES
    assert mine["corpora"]["history"]["token_states"] == NO_ROWS_STATES
    assert mine["corpora"]["errors"]["token_states"] is None  # errors keep no states


def test_an_embedder_without_token_states_keeps_none(settings, api, session, llm_server):
    settings.MEMORYHUB_PROVIDERS = {
        "embedding": {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {"URL": llm_server.url, "MODEL": "remote-embed", "DIMENSIONS": 384},
        },
        "llm": None,
    }
    rows = add(session, "hello there")

    result = corpus_embed(corpus="messages", ids=[r.pk for r in rows])

    assert result.embedded == 1
    assert MessageTokens.objects.count() == 0
    assert api.get("/search/status").json()["token_states"] == NO_EMBEDDER_STATES
