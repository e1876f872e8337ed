"""The search page: the API's message_search in the browser, with legs, score, context
window, highlighted terms and a link to each hit's place in the timeline."""

import pytest
from django.urls import reverse

from apps.review.curation import highlight
from tests.factories import SessionFactory
from tests.lifecycle.helpers import add
from tests.memory.helpers import BROKEN, use_embedder

pytestmark = pytest.mark.django_db


@pytest.fixture
def embed_now(django_capture_on_commit_callbacks):
    """Run after-commit callbacks (the embedding tasks, eager) at the end of the block."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _url(agent):
    return reverse("review:search", args=[agent.slug])


def _timeline(agent, message):
    path = reverse("review:timeline", args=[agent.slug, message.session_id])
    return f"{path}?around={message.pk}#m-{message.pk}"


def test_search_sends_anonymous_users_to_log_in(anon_client, agent):
    url = _url(agent)

    response = anon_client.get(url, {"q": "kiwi"})

    assert response.status_code == 302
    assert response["Location"].startswith(f"/accounts/login/?next={url}")


def test_search_is_404_for_another_team(outsider_client, agent):
    assert outsider_client.get(_url(agent), {"q": "kiwi"}).status_code == 404


def test_search_without_a_query_is_the_blank_form_in_hybrid_mode(viewer_client, agent, session):
    for params in ({}, {"q": "", "mode": "keyword"}, {"q": "   "}):
        response = viewer_client.get(_url(agent), params)

        assert response.status_code == 200
        assert response.context["hits"] is None
    html = viewer_client.get(_url(agent)).content.decode()
    assert '<option value="hybrid" selected>' in html
    assert f'<option value="{session.key}">' in html


def test_contains_finds_the_message_with_its_window_highlighted_and_linked(
    viewer_client, agent, session
):
    rows = add(session, "what did you make?", "a Kiwi smoothie <b>today</b>", "nice", "bye")

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    assert response.status_code == 200
    [hit] = response.context["hits"]
    assert hit.message.pk == rows[1].pk
    assert [leg for leg, _rank, _score in hit.legs] == ["contains"]
    assert [m.pk for m, _marked in hit.window] == [rows[0].pk, rows[1].pk, rows[2].pk]
    html = response.content.decode()
    assert _timeline(agent, rows[1]) in html
    assert "a <mark>Kiwi</mark> smoothie &lt;b&gt;today&lt;/b&gt;" in html
    assert "<b>today</b>" not in html
    assert "contains #1" in html


def test_hybrid_shows_both_legs_with_rank_and_score(viewer_client, agent, embed_now):
    with embed_now():
        rows = [
            add(SessionFactory(agent=agent), text)[0]
            for text in ("kiwi banana smoothie", "kiwi", "unrelated words here")
        ]

    response = viewer_client.get(_url(agent), {"q": "kiwi smoothie", "mode": "hybrid"})

    hits = response.context["hits"]
    assert [h.message.pk for h in hits] == [m.pk for m in rows]
    # hybrid is reranked by default: each hit also shows its reranker rank and score
    assert [[leg for leg, *_ in h.legs] for h in hits] == [
        ["bm25", "rerank", "vector"],
        ["bm25", "rerank", "vector"],
        ["rerank", "vector"],
    ]
    html = response.content.decode()
    assert f"score {hits[0].score:.4f}" in html
    assert "bm25 #1" in html
    assert "vector #1" in html
    assert "rerank #1" in html
    assert "<mark>kiwi</mark> banana <mark>smoothie</mark>" in html


def test_the_session_filter_takes_a_key_or_an_id(viewer_client, agent, session):
    other = SessionFactory(agent=agent, key="chat-2")
    add(session, "kiwi in chat one")
    mine = add(other, "kiwi in chat two")[0]

    by_key = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains", "session": "chat-2"})
    by_id = viewer_client.get(
        _url(agent), {"q": "kiwi", "mode": "contains", "session": str(other.pk)}
    )

    assert [h.message.pk for h in by_key.context["hits"]] == [mine.pk]
    assert [h.message.pk for h in by_id.context["hits"]] == [mine.pk]
    assert '<option value="chat-2" selected>' in by_key.content.decode()


def test_another_agent_s_messages_never_show(viewer_client, agent, session, other_agent):
    add(SessionFactory(agent=other_agent, key="theirs"), "kiwi secret")

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    assert response.context["hits"] == []
    assert "secret" not in response.content.decode()
    assert viewer_client.get(_url(agent), {"q": "kiwi", "session": "theirs"}).status_code == 400


def test_an_unknown_mode_is_400(viewer_client, agent):
    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "fuzzy"})

    assert response.status_code == 400
    assert "fuzzy" in response.content.decode()


def test_a_query_over_the_limit_is_400(viewer_client, agent, settings):
    settings.MEMORYHUB_SEARCH_MAX_QUERY_BYTES = 10

    response = viewer_client.get(_url(agent), {"q": "k" * 11, "mode": "contains"})

    assert response.status_code == 400
    assert "query is over 10 bytes" in response.content.decode()


def test_an_unknown_session_is_400(viewer_client, agent):
    response = viewer_client.get(_url(agent), {"q": "kiwi", "session": "nope"})

    assert response.status_code == 400
    assert "session not found" in response.content.decode()


def test_an_embedder_failure_in_semantic_mode_shows_keyword_hits_and_says_so(
    viewer_client, agent, session, settings
):
    add(session, "kiwi")
    use_embedder(settings, BROKEN)

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "semantic"})

    assert (response.status_code, len(response.context["hits"])) == (200, 1)
    assert "The query could not be embedded: these are keyword (BM25) matches." in (
        response.content.decode()
    )
    # Contains needs no embedder and still works.
    ok = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})
    assert (ok.status_code, len(ok.context["hits"])) == (200, 1)


def test_highlight_escapes_first_and_never_cuts_an_entity():
    assert str(highlight("Tom & Jerry <amp>", "amp")) == "Tom &amp; Jerry &lt;<mark>amp</mark>&gt;"
    assert (
        str(highlight("A KIWI and a kiwi", "kiwi")) == "A <mark>KIWI</mark> and a <mark>kiwi</mark>"
    )
    assert str(highlight("<x>", "")) == "&lt;x&gt;"
