"""The real all-MiniLM-L6-v2 int8 model, run in-process (no network, no download)."""

import hashlib
import math

import numpy as np
import pytest
from django.test import override_settings

from apps.providers.embeddings import get_embedder
from apps.providers.embeddings.base import EmbeddingError
from apps.providers.embeddings.minilm import MiniLMEmbedder
from apps.providers.embeddings.token_embedder import TokenStateError

pytestmark = pytest.mark.slow

MINILM = {"CLASS": "apps.providers.embeddings.minilm.MiniLMEmbedder", "CONFIG": {"THREADS": 1}}


@pytest.fixture(scope="module")
def embedder():
    return MiniLMEmbedder(threads=1, batch_size=32)


def cosine(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_question_is_closest_to_the_sentence_that_answers_it(embedder):
    # given
    question = "What is my cat's name?"
    answer = "My cat is called Whiskerino"
    unrelated = [
        "The quarterly budget review is scheduled for Monday.",
        "Preheat the oven to 180 degrees before baking the bread.",
        "The train to Hamburg leaves from platform 7.",
    ]

    # when
    q, *others = embedder.embed([question, answer, *unrelated])

    # then
    scores = [cosine(q, v) for v in others]
    assert scores.index(max(scores)) == 0
    assert scores[0] > max(scores[1:]) + 0.3


def test_vectors_are_384_dimensional_unit_vectors(embedder):
    vectors = embedder.embed(["hello", "a longer sentence about memory systems", ""])

    assert [len(v) for v in vectors] == [384, 384, 384]
    for v in vectors:
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, abs_tol=1e-5)


def test_same_input_gives_identical_vectors(embedder):
    first = embedder.embed(["Remember that I prefer window seats."])
    second = embedder.embed(["Remember that I prefer window seats."])

    assert first == second


def test_batch_of_40_equals_one_by_one(embedder):
    # given: texts of very different lengths, so batches are padded
    texts = [f"Message {i}: " + "the user talked about travel plans " * (i % 7) for i in range(40)]

    # when
    batched = np.array(embedder.embed(texts))
    single = np.array([embedder.embed([t])[0] for t in texts])

    # then
    assert batched.shape == (40, 384)
    assert np.abs(batched - single).max() < 1e-5


def test_text_beyond_256_tokens_is_truncated_not_rejected(embedder):
    long_text = "memory " * 1000

    (vector,) = embedder.embed([long_text])

    assert vector == embedder.embed(["memory " * 300])[0]


def test_output_keeps_input_order(embedder):
    texts = ["short", "a much much longer text than the first one", "mid length text"]

    assert embedder.embed(texts) == [embedder.embed([t])[0] for t in texts]


def test_empty_list_gives_empty_list(embedder):
    assert embedder.embed([]) == []


def test_a_bare_string_is_refused(embedder):
    with pytest.raises(TypeError, match="not a single str"):
        embedder.embed("hello")


def test_check_verifies_the_pinned_hashes(embedder):
    assert embedder.check() == (
        "all-MiniLM-L6-v2 int8 ONNX, 384-d, sha256 ok, 1 thread(s), "
        "token states all-MiniLM-L6-v2/pca64-f8e8efff@int8"
    )


def test_a_model_file_with_the_wrong_hash_is_refused(tmp_path):
    # given
    fake_model = tmp_path / "model.onnx"
    fake_model.write_bytes(b"not the model")
    embedder = MiniLMEmbedder(model_path=str(fake_model))

    # when / then
    with pytest.raises(EmbeddingError, match=r"has sha256 .*, expected 8199be6f"):
        embedder.embed(["hello"])


def test_get_embedder_builds_minilm_from_settings():
    with override_settings(MEMORYHUB_PROVIDERS={"embedding": MINILM, "llm": None}):
        embedder = get_embedder()

        assert isinstance(embedder, MiniLMEmbedder)
        assert (embedder.name, embedder.dimensions, embedder.threads) == (
            "all-MiniLM-L6-v2",
            384,
            1,
        )


def test_concurrent_first_use_loads_one_runtime_and_agrees():
    # given: four threads that all embed at the same moment with a fresh thread setting
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from apps.providers.embeddings import minilm

    barrier = Barrier(4)
    embedder = MiniLMEmbedder(threads=2)

    def embed(_):
        barrier.wait()
        return embedder.embed(["concurrent first use"])

    # when
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(embed, range(4)))

    # then
    assert results[1:] == results[:1] * 3
    assert [key for key in minilm._runtimes if key[1] == 2] == [(str(embedder.model_path), 2, True)]


@pytest.mark.parametrize(("spin", "entry"), [(False, "0"), (True, "1")])
def test_the_spin_setting_reaches_onnxruntime(spin, entry):
    from apps.providers.embeddings import minilm

    embedder = MiniLMEmbedder(threads=2, spin=spin)
    embedder.embed(["spin"])

    session = minilm._runtimes[(str(embedder.model_path), 2, spin)].session
    options = session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == entry
    assert repr(embedder) == f"MiniLMEmbedder(threads=2, batch_size=32, spin={spin})"
    assert MiniLMEmbedder().spin is True  # onnxruntime's own default


def test_token_states_come_from_the_same_run_as_the_vectors(embedder):
    texts = ["Caroline: I relocated here from Sweden four years ago.", "ok", "?!"]

    found = embedder.embed_with_tokens(texts)

    assert embedder.token_space() == "all-MiniLM-L6-v2/pca64-f8e8efff@int8"
    assert np.allclose([e.vector for e in found], embedder.embed(texts), atol=1e-6)
    # kept: caroline, relocated, sweden, four, years, ago ("i here from" are stopwords, ":"
    # and "." punctuation); "ok" is a word; "?!" keeps nothing
    assert [e.codes.shape for e in found] == [(6, 64), (1, 64), (0, 64)]
    assert {e.codes.dtype for e in found} == {np.dtype(np.int8)}
    assert [int(np.abs(e.codes).max()) for e in found[:2]] == [127, 127]


def test_a_query_gets_its_vector_and_content_word_states_from_one_run(embedder):
    query = embedder.embed_query_with_tokens("Where did Caroline move from?")

    assert np.allclose(
        query.vector, embedder.embed(["Where did Caroline move from?"])[0], atol=1e-6
    )
    assert query.tokens.shape == (2, 64)  # caroline, move
    assert np.allclose(np.linalg.norm(query.tokens, axis=1), 1.0, atol=1e-5)
    assert (query.token_space, query.token_error) == (embedder.token_space(), "")


def test_a_projection_file_with_the_wrong_hash_is_refused(tmp_path):
    wrong = tmp_path / "projection.npz"
    wrong.write_bytes(b"not the projection")
    broken = MiniLMEmbedder(token_projection_path=str(wrong))

    with pytest.raises(TokenStateError, match=f"MiniLM token projection: {wrong} has sha256 "):
        broken.token_space()
    with pytest.raises(TokenStateError, match="expected f8e8efff"):
        broken.embed_with_tokens(["hello"])
    query = broken.embed_query_with_tokens("hello there")
    assert (query.tokens, query.token_space) == (None, "")
    assert query.token_error.startswith("MiniLM token projection: ")
    assert len(query.vector) == 384  # vectors still work
    digest = hashlib.sha256(b"not the projection").hexdigest()
    assert broken.check().endswith(
        f"no token states: MiniLM token projection: {wrong} has sha256 {digest}, expected "
        "f8e8efffd7a7f5a2ff988ede0b2ef46b10745ca5cdb58db9f6d9581d1755469e"
    )
