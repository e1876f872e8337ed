"""The deterministic fake embedder used by most tests."""

import math

import pytest

from apps.providers.embeddings.fake import HashEmbedder


def dot(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_same_text_gives_the_same_vector_across_instances():
    text = "My cat is called Whiskerino"

    assert HashEmbedder().embed([text]) == HashEmbedder().embed([text])


def test_vectors_are_384_dimensional_unit_vectors():
    embedder = HashEmbedder()

    vectors = embedder.embed(["one", "two words", "", "!!!"])

    assert (embedder.name, embedder.dimensions) == ("fake-hash", 384)
    assert [len(v) for v in vectors] == [384, 384, 384, 384]
    for v in vectors:
        assert math.isclose(math.sqrt(dot(v, v)), 1.0, abs_tol=1e-12)


def test_texts_sharing_words_are_more_similar_than_unrelated_texts():
    embedder = HashEmbedder()
    query, related, unrelated_a, unrelated_b = embedder.embed(
        [
            "what is my cat's name",
            "my cat is called Whiskerino",
            "the quarterly budget review happens on Monday",
            "preheat the oven before baking bread",
        ]
    )

    assert dot(query, related) > dot(query, unrelated_a)
    assert dot(query, related) > dot(query, unrelated_b)


def test_case_does_not_matter():
    embedder = HashEmbedder()

    assert embedder.embed(["Hello World"]) == embedder.embed(["hello world"])


def test_other_dimensions_can_be_configured():
    assert len(HashEmbedder(dimensions=16).embed(["hello"])[0]) == 16


def test_a_bare_string_is_refused():
    with pytest.raises(TypeError, match="not a single str"):
        HashEmbedder().embed("hello")
