"""The search page: the API's message_search in the browser. Hits come in blocks (their
context windows merged where they overlap or touch; no message twice on a page), each block
naming its session, each hit marked and linked to its place in the timeline, with its
fused score and legs as a person reads them."""

import math
import re
import uuid
from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from apps.agents.services import agent_update_settings
from apps.review.curation import highlight
from tests.factories import SessionFactory
from tests.lifecycle.helpers import T0, add
from tests.memory.helpers import BROKEN, use_embedder

pytestmark = pytest.mark.django_db

TIMES = "\N{MULTIPLICATION SIGN}"


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
    assert [leg.label for leg in hit.legs] == ["substring #1"]
    [block] = response.context["blocks"]
    assert [(line.message.pk, line.hit is not None) for line in block.lines] == [
        (rows[0].pk, False),
        (rows[1].pk, True),
        (rows[2].pk, False),
    ]
    html = response.content.decode()
    assert _timeline(agent, rows[1]) in html
    assert "a <mark>Kiwi</mark> smoothie &lt;b&gt;today&lt;/b&gt;" in html
    assert "<b>today</b>" not in html
    assert ">substring #1<" in html
    assert _blocks(html) == [[(rows[0].pk, False), (rows[1].pk, True), (rows[2].pk, False)]]


# --- blocks: windows, merging, each message once ---


class _Page(HTMLParser):
    """The rendered result list: per `li.block`, its messages as (pk, marked as a hit), and
    every `data-message` on the page in order."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[list[tuple[uuid.UUID, bool]]] = []
        self.messages: list[uuid.UUID] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "li" and "block" in classes:
            self.blocks.append([])
        if "data-message" in a:
            pk = uuid.UUID(a["data-message"])
            self.messages.append(pk)
            self.blocks[-1].append((pk, "is-hit" in classes))


def _parsed(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _blocks(html: str) -> list[list[tuple[uuid.UUID, bool]]]:
    return _parsed(html).blocks


def _assert_each_message_once(html: str, rows) -> None:
    """No message appears twice on the page: by its element, and by its text."""
    shown = _parsed(html).messages
    assert len(shown) == len(set(shown))
    for m in rows:
        if m.pk in shown:
            assert html.count(m.content.split(" kiwi")[0]) == 1, m.content


def _turns(session, n, hits, start=T0):
    """n messages "turn NN", those at the `hits` positions naming a kiwi."""
    texts = [f"turn {i:02d}" + (" kiwi" if i in hits else " filler") for i in range(n)]
    return add(session, *texts, start=start)


def _pks(rows, positions):
    return [rows[i].pk for i in positions]


def test_a_hit_shows_two_messages_before_and_one_after_at_most(viewer_client, agent, session):
    rows = _turns(session, 12, hits={0, 6, 11})

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    # contains: newest first; each hit's window is 2 before and 1 after, cut at the ends
    assert [h.message.pk for h in response.context["hits"]] == _pks(rows, [11, 6, 0])
    html = response.content.decode()
    assert _blocks(html) == [
        [(rows[9].pk, False), (rows[10].pk, False), (rows[11].pk, True)],
        [(rows[4].pk, False), (rows[5].pk, False), (rows[6].pk, True), (rows[7].pk, False)],
        [(rows[0].pk, True), (rows[1].pk, False)],
    ]
    _assert_each_message_once(html, rows)
    for i in (2, 3, 8):
        assert str(rows[i].pk) not in html


def test_the_window_is_the_agent_s_own_setting(viewer_client, agent, session):
    agent_update_settings(
        agent=agent, changes={"search_context_before": 1, "search_context_after": 3}
    )
    rows = _turns(session, 12, hits={5})

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    assert _blocks(response.content.decode()) == [
        [(rows[4].pk, False), (rows[5].pk, True)] + [(pk, False) for pk in _pks(rows, [6, 7, 8])]
    ]


def test_hits_whose_windows_overlap_are_one_block_listing_each_hit(viewer_client, agent, session):
    # hits at 3 and 5: windows 1-4 and 3-6 overlap; hit 10 (window 8-11) is apart, 7 between
    rows = _turns(session, 12, hits={3, 5, 10})

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    html = response.content.decode()
    # blocks by their best hit: 10 is #1 (newest first), 5 is #2
    assert _blocks(html) == [
        [(rows[8].pk, False), (rows[9].pk, False), (rows[10].pk, True), (rows[11].pk, False)],
        [(rows[1].pk, False), (rows[2].pk, False), (rows[3].pk, True), (rows[4].pk, False),
         (rows[5].pk, True), (rows[6].pk, False)],
    ]  # fmt: skip
    first, second = response.context["blocks"]
    assert [(h.rank, h.message.pk) for h in second.hits] == [(3, rows[3].pk), (2, rows[5].pk)]
    assert (second.best.rank, first.best.rank) == (2, 1)
    assert f'<li class="msg role-user is-hit" data-message="{rows[3].pk}" id="hit-3">' in html
    assert "3 hits in 2 passages" in html
    _assert_each_message_once(html, rows)
    assert str(rows[7].pk) not in html


def test_hits_whose_windows_touch_are_one_block(viewer_client, agent, session):
    # windows 0-3 (hit 2) and 4-7 (hit 6) touch: nothing between them
    rows = _turns(session, 10, hits={2, 6})

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    [block] = _blocks(response.content.decode())
    assert block == [(rows[i].pk, i in (2, 6)) for i in range(8)]


def test_windows_of_two_sessions_never_merge(viewer_client, agent):
    # two sessions written at the same minutes: the windows share times, not messages
    one, two = SessionFactory(agent=agent, key="one"), SessionFactory(agent=agent, key="two")
    a = _turns(one, 4, hits={3})
    b = _turns(two, 4, hits={0}, start=T0 + timedelta(minutes=4))

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    assert _blocks(response.content.decode()) == [
        [(b[0].pk, True), (b[1].pk, False)],
        [(a[1].pk, False), (a[2].pk, False), (a[3].pk, True)],
    ]
    assert [blk.session.key for blk in response.context["blocks"]] == ["two", "one"]


def test_twenty_hits_in_one_conversation_show_each_message_once(viewer_client, agent, session):
    # issue 28: every hit carried its merged window, 20 hits repeated the same lines
    rows = _turns(session, 30, hits=set(range(0, 30, 2)) | {29})
    with_kiwi = [m for m in rows if "kiwi" in m.content]

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    html = response.content.decode()
    assert len(response.context["hits"]) == 16
    [block] = _blocks(html)
    assert block == [(m.pk, m in with_kiwi) for m in rows]
    _assert_each_message_once(html, rows)
    assert html.count('class="hit-head"') == 16


def test_each_block_names_its_session_and_links_to_the_timeline(viewer_client, agent):
    chat = SessionFactory(agent=agent, key="trip-2024", title="Planning the Lisbon trip")
    rows = _turns(chat, 6, hits={1, 2})

    response = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"})

    html = response.content.decode()
    [block] = response.context["blocks"]
    assert block.best.message == rows[2]  # newest first
    path = reverse("review:timeline", args=[agent.slug, chat.pk])
    assert (
        f'<a class="block-session" href="{path}?around={rows[2].pk}#m-{rows[2].pk}">'
        "Session <strong>trip-2024</strong> · Planning the Lisbon trip</a>"
    ) in html
    for m, rank in ((rows[1], 2), (rows[2], 1)):
        assert f'<a href="{_timeline(agent, m)}">hit #{rank} · 2026-01-05 ' in html


# --- scores as a person reads them ---


def _bm25(idf, tf, dl, avgdl):
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))


def test_hybrid_shows_the_fused_score_and_each_leg_readably(viewer_client, agent, embed_now):
    agent_update_settings(agent=agent, changes={"rerank": False})  # RRF's own scores
    with embed_now():
        rows = [
            add(SessionFactory(agent=agent), text)[0]
            for text in ("kiwi banana smoothie", "kiwi", "unrelated words here")
        ]

    response = viewer_client.get(_url(agent), {"q": "kiwi smoothie", "mode": "hybrid"})

    hits = response.context["hits"]
    assert [h.message.pk for h in hits] == [m.pk for m in rows]
    # BM25 with Lucene's idf: N 3, avgdl 7/3; kiwi in 2 (ln 1.6), smoothie in 1 (ln 8/3)
    first = _bm25(math.log(1.6), 1, 3, 7 / 3) + _bm25(math.log(8 / 3), 1, 3, 7 / 3)
    second = _bm25(math.log(1.6), 1, 1, 7 / 3)
    assert (f"{first:.2f}", f"{second:.2f}") == ("1.30", "0.61")
    sims = [h.legs[-1].label.rsplit(" ", 1)[1] for h in hits]
    assert [h.score_label for h in hits] == ["fused 0.182", "fused 0.167", "fused 0.077"]
    assert [[leg.label for leg in h.legs] for h in hits] == [
        ["keyword #1 · BM25 1.30", f"semantic #1 · similarity {sims[0]}"],
        ["keyword #2 · BM25 0.61", f"semantic #2 · similarity {sims[1]}"],
        [f"semantic #3 · similarity {sims[2]}"],
    ]
    html = response.content.decode()
    assert '<span class="score" title="Fused score: the sum over the legs of 1/(10 + rank)' in html
    assert ">fused 0.182</span>" in html
    assert '>keyword #1<span class="leg-value"> · BM25 1.30</span></span>' in html
    assert "<mark>kiwi</mark> banana <mark>smoothie</mark>" in html


def test_a_reranked_hit_says_so_with_its_maxsim(viewer_client, agent, embed_now):
    with embed_now():
        for text in ("kiwi banana smoothie", "kiwi", "unrelated words here"):
            add(SessionFactory(agent=agent), text)

    response = viewer_client.get(_url(agent), {"q": "kiwi smoothie", "mode": "hybrid"})

    hits = response.context["hits"]
    assert [[leg.name for leg in h.legs] for h in hits] == [
        ["bm25", "vector", "rerank"],
        ["bm25", "vector", "rerank"],
        ["vector", "rerank"],
    ]
    assert [h.score_label for h in hits] == [f"reranked {h.score:.2f}" for h in hits]
    html = response.content.decode()
    assert "rerank #1 · MaxSim " in html
    assert 'title="Reranked score: the fused score and the rerank MaxSim' in html


def test_a_neighbour_says_whose_and_what_it_received(viewer_client, agent, embed_now):
    agent_update_settings(agent=agent, changes={"rerank": False})
    session = SessionFactory(agent=agent)
    with embed_now():
        rows = add(session, "what did you make", "a kiwi smoothie", "nice")

    response = viewer_client.get(_url(agent), {"q": "kiwi smoothie", "mode": "hybrid"})

    by_pk = {h.message.pk: h for h in response.context["hits"]}
    top = by_pk[rows[1].pk]
    assert top.rank == 1
    rrf = 1 / 11 + 1 / 11  # the top hit, first in both legs, before smoothing
    for m in (rows[0], rows[2]):
        labels = [leg.label for leg in by_pk[m.pk].legs]
        assert labels[-1] == f"neighbour of #1 · +0.2 {TIMES} {rrf:.3f}"  # 0.182
    html = response.content.decode()
    assert (
        f'title="neighbour of #1 · +0.2 {TIMES} {rrf:.3f}: Neighbour smoothing: the message is '
        "right before or after a hit"
    ) in html
    # the three hits are one passage, each message once
    assert _blocks(html) == [[(m.pk, True) for m in rows]]


def test_the_page_explains_every_score_it_shows(viewer_client, agent, session):
    add(session, "kiwi")

    html = viewer_client.get(_url(agent), {"q": "kiwi", "mode": "contains"}).content.decode()

    legend = html[html.index('<details class="score-legend">') :]
    legend = legend[: legend.index("</details>")]
    terms = re.findall(r"<dt>([^<]+)</dt>", legend)
    assert terms == ["fused", "reranked", "keyword", "semantic", "substring", "neighbour", "rerank"]
    assert "Okapi, k1 1.2, b 0.75, Lucene&#x27;s idf" in legend
    assert f"receives 0.2 {TIMES} that hit&#x27;s fused score" in legend


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
