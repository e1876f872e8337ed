"""BM25 on both backends: hand-computed scores, phrases, prefixes, hostile syntax."""

import math

import pytest

from apps.search.legs import keyword_search
from apps.search.ranking import rrf
from tests.factories import MessageFactory, SessionFactory


def _bm25(idf, tf, dl, avgdl):
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))


@pytest.fixture
def corpus(session):
    texts = [
        "apple banana apple",  # 3 tokens
        "banana cherry",  # 2
        "cherry durian fig grape",  # 4
        "grape melon",  # 2
        "lemon lime",  # 2
    ]
    return [MessageFactory(session=session, content=t, name="") for t in texts]


def _search(agent, query, limit=10):
    return keyword_search("messages", agent_id=agent.id, query=query, limit=limit)


@pytest.mark.django_db
def test_bm25_scores_match_a_hand_computation(agent, corpus):
    # given 5 documents, 13 tokens: avgdl 2.6; apple in 1 doc, grape in 2
    hits = _search(agent, "apple grape")

    # then (Lucene's idf = ln(1 + (N - n + 0.5) / (n + 0.5)); k1 1.2, b 0.75)
    idf_apple, idf_grape = math.log(1 + 4.5 / 1.5), math.log(1 + 3.5 / 2.5)
    assert (idf_apple, idf_grape) == (math.log(4), math.log(2.4))
    expected = [
        (corpus[0].id, _bm25(idf_apple, 2, 3, 2.6)),
        (corpus[3].id, _bm25(idf_grape, 1, 2, 2.6)),
        (corpus[2].id, _bm25(idf_grape, 1, 4, 2.6)),
    ]
    assert [h.object_id for h in hits] == [e[0] for e in expected]
    assert [h.score for h in hits] == pytest.approx([e[1] for e in expected], rel=1e-9)
    assert {h.leg for h in hits} == {"bm25"}


@pytest.mark.django_db
def test_a_term_in_half_the_documents_still_counts(agent, corpus):
    # "cherry" is in 2 of 5; a 3rd cherry puts it in half the documents, where FTS5's own
    # idf, ln((N - n + 0.5) / (n + 0.5)), is 0 (floored to 1e-6: every score ~1e-6)
    pie = MessageFactory(session=corpus[0].session, content="cherry pie", name="")
    hits = _search(agent, "cherry")
    # N=6, n=3: Lucene's idf ln(1 + 3.5/3.5) = ln 2; avgdl = 15/6; equal scores tie by pk
    two = _bm25(math.log(2), 1, 2, 2.5)  # 0.693 x 2.2 / (1 + 1.2 x 0.85) = 0.7549
    assert two == pytest.approx(0.754913, abs=1e-6)
    assert [h.object_id for h in hits] == [*sorted([corpus[1].id, pie.id], key=str), corpus[2].id]
    assert [h.score for h in hits] == pytest.approx(
        [two, two, _bm25(math.log(2), 1, 4, 2.5)], rel=1e-9
    )


@pytest.mark.django_db
def test_phrase_query_matches_only_adjacent_words(agent, session):
    first = MessageFactory(session=session, content="the cat sat on the mat", name="")
    MessageFactory(session=session, content="sat down, the cat did", name="")
    MessageFactory(session=session, content="dogs bark", name="")

    hits = _search(agent, '"cat sat"')

    assert [h.object_id for h in hits] == [first.id]


@pytest.mark.django_db
def test_prefix_query_matches_word_starts(agent, session):
    painting = MessageFactory(session=session, content="I love painting", name="")
    painted = MessageFactory(session=session, content="we painted the fence", name="")
    MessageFactory(session=session, content="no pain no gain", name="")

    hits = _search(agent, "paint*")

    # N=3, avgdl 11/3; the prefix is one unit, in 2 documents: idf ln(1 + 1.5/2.5)
    assert [h.object_id for h in hits] == [painting.id, painted.id]
    assert [h.score for h in hits] == pytest.approx(
        [_bm25(math.log(1.6), 1, 3, 11 / 3), _bm25(math.log(1.6), 1, 4, 11 / 3)], rel=1e-9
    )


@pytest.mark.django_db
def test_participant_name_is_indexed_with_content(agent, session):
    said = MessageFactory(session=session, name="Caroline", content="I went to a support group")
    MessageFactory(session=session, name="Melanie", content="I went running")

    hits = _search(agent, "What did Caroline say about the group?")

    assert [h.object_id for h in hits] == [said.id]


HOSTILE = ['cat"', "cat's", "cat*dog", "cat:dog", "cat & dog", "cat | dog", "!cat dog",
           "(cat dog", "NEAR(cat dog)", "cat AND dog", "cat -dog", "'cat' \"dog", "*", "\"",
           "cat OR", "-", "^cat", "cat}{", "col:cat"]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("query", HOSTILE)
def test_fts_syntax_never_reaches_the_engine(agent, session, query):
    cat = MessageFactory(session=session, content="cat food", name="")
    dog = MessageFactory(session=session, content="dog food", name="")
    MessageFactory(session=session, content="bird seed", name="")

    found = {h.object_id for h in _search(agent, query)}

    expected = {
        "*": set(), '"': set(), "-": set(), "cat's": {cat.id}, "cat OR": {cat.id}, 'cat"': {cat.id},
        "^cat": {cat.id}, "cat}{": {cat.id}, "col:cat": {cat.id},
    }.get(query, {cat.id, dog.id})  # fmt: skip
    assert found == expected


@pytest.mark.django_db
def test_unicode_and_emoji(agent, session):
    cafe = MessageFactory(session=session, content="Meet at the café 🙂 tomorrow", name="")
    MessageFactory(session=session, content="coffee at home", name="")

    assert [h.object_id for h in _search(agent, "café 🙂")] == [cafe.id]
    assert _search(agent, "🙂") == []


@pytest.mark.django_db
def test_another_agents_messages_never_appear(agent, other_agent, session):
    mine = MessageFactory(session=session, content="secret launch codes", name="")
    theirs = MessageFactory(
        session=SessionFactory(agent=other_agent), content="secret launch codes", name=""
    )

    assert [h.object_id for h in _search(agent, "secret launch")] == [mine.id]
    found = keyword_search("messages", agent_id=other_agent.id, query="secret", limit=10)
    assert [h.object_id for h in found] == [theirs.id]


@pytest.mark.django_db
def test_edits_and_deletes_keep_the_index_exact(agent, session):
    m = MessageFactory(session=session, content="alpha beta", name="")
    other = MessageFactory(session=session, content="gamma", name="")

    m.content = "delta epsilon"
    m.save()
    assert _search(agent, "alpha") == []
    assert [h.object_id for h in _search(agent, "delta")] == [m.id]

    other.delete()
    # one document of two tokens is left: N = n = 1, idf ln(1 + 0.5/1.5), dl = avgdl, so
    # the tf part is 2.2 / (1 + 1.2) = 1 and the score is the idf itself (FTS5's: 1e-6)
    hits = _search(agent, "epsilon")
    assert [h.object_id for h in hits] == [m.id]
    assert hits[0].score == pytest.approx(math.log(4 / 3), rel=1e-9)


@pytest.mark.django_db
def test_both_backends_give_this_order(agent, session):
    # The same literal expectation runs on SQLite and on PostgreSQL.
    texts = ["the red fox jumps", "a red red car", "blue car parked", "red fox, red fox",
             "green tree"]  # fmt: skip
    rows = [MessageFactory(session=session, content=t, name="") for t in texts]

    hits = _search(agent, "red fox car", limit=3)

    # N=5, avgdl 17/5; red in 3 (idf ln(1 + 2.5/3.5)), fox and car in 2 (ln 2.4). "red" counts
    # (with FTS5's floored idf it added ~1e-6): "a red red car" beats "blue car parked", and
    # "the red fox jumps" too, where the floor had put them in the other order.
    red, fox_car = math.log(1 + 2.5 / 3.5), math.log(2.4)
    expected = [
        (rows[3].id, _bm25(red, 2, 4, 3.4) + _bm25(fox_car, 2, 4, 3.4)),  # 1.8529
        (rows[1].id, _bm25(red, 2, 4, 3.4) + _bm25(fox_car, 1, 4, 3.4)),  # 1.5226
        (rows[0].id, _bm25(red, 1, 4, 3.4) + _bm25(fox_car, 1, 4, 3.4)),  # 1.3192
    ]
    assert [h.object_id for h in hits] == [e[0] for e in expected]
    assert [h.score for h in hits] == pytest.approx([e[1] for e in expected], rel=1e-9)
    assert [round(h.score, 4) for h in hits] == [1.8529, 1.5226, 1.3192]
    # "blue car parked" (car once, 3 tokens) is 4th
    assert _bm25(fox_car, 1, 3, 3.4) == pytest.approx(0.9197, abs=1e-4)
    assert [h.object_id for h in _search(agent, "red fox car")][3] == rows[2].id


def test_rrf_fuses_and_reports_legs():
    from apps.search.ranking import Hit

    a = [Hit("x", 3.0, "bm25"), Hit("y", 2.0, "bm25")]
    b = [Hit("y", 0.9, "vector"), Hit("z", 0.8, "vector")]

    fused = rrf(a, b)

    assert [f.object_id for f in fused] == ["y", "x", "z"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0].legs["bm25"].rank == 2
    assert fused[0].legs["vector"].score == 0.9
    assert set(fused[1].legs) == {"bm25"}


@pytest.mark.django_db
def test_phrase_and_terms_together(agent, session):
    # N=3: the phrase is in 1 doc (idf ln(1 + 2.5/1.5)), "dog" in 2 (ln(1 + 1.5/2.5)); avgdl 12/3
    texts = ["the cat sat on the mat", "dog days", "cat and dog sat"]
    rows = [MessageFactory(session=session, content=t, name="") for t in texts]

    hits = _search(agent, '"cat sat" dog')

    assert [h.object_id for h in hits] == [rows[0].id, rows[1].id, rows[2].id]
    assert [h.score for h in hits] == pytest.approx(
        [_bm25(math.log(8 / 3), 1, 6, 4), _bm25(math.log(1.6), 1, 2, 4),
         _bm25(math.log(1.6), 1, 4, 4)], rel=1e-9,
    )  # fmt: skip
