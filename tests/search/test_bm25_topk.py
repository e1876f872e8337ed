"""PostgreSQL top-k BM25 (MaxScore over the impact index) equals the exhaustive scorer."""

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from apps.conversations.models import Message
from apps.search.backends.postgres import bm25, topk
from apps.search.corpora import get_corpus
from apps.search.query import parse
from apps.search.ranking import bm25_term
from tests.factories import SessionFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Words the stemmer leaves alone (consonant-vowel syllables ending in a, o or u).
VOCAB = sorted(
    {a + b + c for a in ("ba", "ko", "mu", "ta", "lo", "ru", "sa", "po") for b in
     ("ka", "no", "tu", "ma", "ro", "gu", "la") for c in ("", "ta", "mo", "ku")}
)  # fmt: skip


def _zipf_word(rng: random.Random) -> str:
    # Zipf-like: a handful of words in most documents, a long tail in few.
    return VOCAB[min(len(VOCAB) - 1, int(rng.paretovariate(1.1)) - 1)]


@pytest.fixture
def generated(agent):
    """3,000 messages in 15 sessions: Zipf words, lengths 1-40, repeated words (tf > 1)."""
    rng = random.Random(20261124)
    sessions = [SessionFactory(agent=agent, key=f"g{i}") for i in range(15)]
    rows = []
    for i in range(3000):
        words = [_zipf_word(rng) for _ in range(rng.randint(1, 40))]
        if rng.random() < 0.3:
            words += [rng.choice(words)] * rng.randint(1, 4)
        rng.shuffle(words)
        text = " ".join(words)
        rows.append(
            Message(
                id=uuid.UUID(int=rng.getrandbits(128)), agent=agent, session=sessions[i % 15],
                role="user", content=text, byte_size=len(text),
                created_at=T0 + timedelta(minutes=i),
            )
        )  # fmt: skip
    Message.objects.bulk_create(rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return sessions, rng


def _exhaustive(cursor, q: topk.Query, idf: dict[str, float]) -> list[tuple[object, float]]:
    """The reference: every posting of every query term, summed in Python, best first."""
    cursor.execute(
        f"SELECT term, doc_id, tf, len FROM {q.post} WHERE agent_id = %s AND term = ANY(%s)",
        [q.agent_id, list(idf)],
    )
    scores: dict[object, float] = {}
    for term, doc_id, tf, length in cursor.fetchall():
        scores[doc_id] = scores.get(doc_id, 0.0) + bm25_term(idf[term], tf, length, q.avg_len)
    if q.queryset is not None:
        allowed = set(q.queryset.values_list("pk", flat=True))
        scores = {pk: s for pk, s in scores.items() if pk in allowed}
    return sorted(scores.items(), key=lambda r: (-r[1], str(r[0])))[: q.limit]


def _query(agent, text: str, limit: int, queryset=None, postings=None):
    """(top `limit`, exhaustive top `limit + 1`) for a term-only query, same statistics.

    One more exhaustive result shows whether the k-th score is tied. `postings` None: by
    MaxScore (or a narrow restriction's tsvectors); 0: by summing every posting."""
    corpus = get_corpus("messages")
    with connection.cursor() as cursor:
        resolved = bm25._resolve_units(cursor, parse(text))
        stats = bm25._read_statistics(cursor, corpus.table, agent.id, resolved)
        weights = {u[1][0]: w for u, w in stats.idf.items()}
        q = topk.Query(
            doc=f"{corpus.table}_bm25doc", post=f"{corpus.table}_bm25post", pk_type="uuid",
            agent_id=agent.id, avg_len=stats.avg_len, limit=limit, queryset=queryset,
            postings=postings,
        )  # fmt: skip
        deeper = topk.Query(**{**q.__dict__, "limit": limit + 1})
        return topk.top_k(cursor, q, weights), _exhaustive(cursor, deeper, weights)


def _assert_same_top(fast, full, k):
    """Equal scores rank by rank, and the same documents except among ties at the k-th."""
    assert [round(s, 9) for _, s in fast] == [round(s, 9) for _, s in full[:k]]
    kth = round(full[k - 1][1], 9) if len(full) >= k else None
    fast_ids = {pk for pk, s in fast if round(s, 9) != kth}
    full_ids = {pk for pk, s in full[:k] if round(s, 9) != kth}
    assert fast_ids == full_ids


def test_top_10_of_1000_queries_equals_the_exhaustive_scorer(agent, generated):
    # given 1,000 queries of 1 to 6 words, common and rare mixed
    _, rng = generated
    queries = [" ".join(_zipf_word(rng) for _ in range(rng.randint(1, 6))) for _ in range(1000)]

    # when each runs through the top-k and the exhaustive scorer
    compared = pruned = 0
    for text in queries:
        fast, full = _query(agent, text, 10)
        # then the top 10 are the same, ties aside
        _assert_same_top(fast, full, 10)
        compared += 1
        pruned += fast != [] and full != []
    assert compared == 1000
    assert pruned > 900  # nearly every query has hits, so the comparison is not vacuous


def test_restricted_queries_equal_the_exhaustive_scorer(agent, generated):
    # given a wide restriction (the first 2,500 messages, as an archive cutoff is) and a
    # narrow one (one session of 200): both scorers see the same queryset
    sessions, rng = generated
    wide = Message.objects.filter(agent=agent, created_at__lt=T0 + timedelta(minutes=2500))
    narrow = Message.objects.filter(session=sessions[3])
    for restriction in (wide, narrow):
        for _ in range(150):
            text = " ".join(_zipf_word(rng) for _ in range(rng.randint(1, 5)))
            fast, full = _query(agent, text, 10, restriction)
            _assert_same_top(fast, full, 10)
            allowed = set(restriction.values_list("pk", flat=True))
            assert {pk for pk, _ in fast} <= allowed


def test_summing_every_posting_equals_the_exhaustive_scorer(agent, generated):
    # given few enough postings to sum them all (as an agent of a few thousand messages has),
    # unrestricted, a wide restriction and a narrow one
    sessions, rng = generated
    wide = Message.objects.filter(agent=agent, created_at__lt=T0 + timedelta(minutes=2500))
    narrow = Message.objects.filter(session=sessions[3])
    for restriction in (None, wide, narrow):
        for _ in range(150):
            text = " ".join(_zipf_word(rng) for _ in range(rng.randint(1, 6)))
            # when the top 10 is the sum of every posting of the query's terms
            fast, full = _query(agent, text, 10, restriction, postings=0)
            # then it is the exhaustive scorer's, ties aside, inside the restriction
            _assert_same_top(fast, full, 10)
            if restriction is not None:
                assert {pk for pk, _ in fast} <= set(restriction.values_list("pk", flat=True))


def test_a_one_word_query_stops_reading_at_the_length_no_document_can_reach(agent, generated):
    # given a word held by hundreds of documents of every length, many repeating it
    word = VOCAB[6]
    corpus = get_corpus("messages")
    with connection.cursor() as cursor:
        resolved = bm25._resolve_units(cursor, parse(word))
        stats = bm25._read_statistics(cursor, corpus.table, agent.id, resolved)
        weights = {u[1][0]: w for u, w in stats.idf.items()}
        q = topk.Query(
            doc=f"{corpus.table}_bm25doc", post=f"{corpus.table}_bm25post", pk_type="uuid",
            agent_id=agent.id, avg_len=stats.avg_len, limit=10, queryset=None,
        )  # fmt: skip
        terms = topk._terms(cursor, q, weights)
        theta = topk._threshold(cursor, q, terms)
        ranges = topk._ranges(terms, q, theta)
        cursor.execute(
            f"SELECT count(*), count(*) FILTER (WHERE len <= r.hi) FROM {q.post} p "
            f"LEFT JOIN unnest(%s::int[], %s::int[]) AS r(tf, hi) ON r.tf = p.tf "
            f"WHERE agent_id = %s AND term = %s",
            [[r[1] for r in ranges], [r[3] for r in ranges], agent.id, word],
        )
        postings, read = cursor.fetchone()

    # then the floor is a real score, and of each tf group only the postings that can still
    # reach it are read: a small part of the word's postings
    assert theta > 0
    assert 10 <= read < postings / 10
