"""The rerankers: MiniLM late interaction (the pinned weights, run for real) and the null one."""

import math

import numpy as np
import pytest
from django.db import transaction
from django.test import override_settings

from apps.providers.checks import check_providers
from apps.providers.guard import ProviderCallInTransaction
from apps.providers.rerank import RerankError, get_reranker
from apps.providers.rerank.maxsim import MiniLMMaxSimReranker, _word_weights
from apps.providers.rerank.null import NullReranker

MAXSIM = {"CLASS": "apps.providers.rerank.maxsim.MiniLMMaxSimReranker", "CONFIG": {}}


@pytest.fixture(scope="module")
def reranker():
    return MiniLMMaxSimReranker()


def test_the_passage_that_answers_scores_above_ones_that_share_its_words(reranker):
    # given: a keyword-heavy distractor, the answer (which shares no content word with the
    # question), and an unrelated turn
    texts = [
        "Caroline: We moved the couch and moved the table, so much moving!",
        "Caroline: I relocated here from Sweden four years ago.",
        "Caroline: The weather was lovely at the beach.",
    ]

    # when
    scores = reranker.score("Where did Caroline move from?", texts)

    # then
    assert sorted(range(3), key=lambda i: -scores[i]) == [1, 0, 2]
    assert all(-1.0 <= s <= 1.0 for s in scores)


def test_scores_keep_input_order_and_do_not_depend_on_the_batch(reranker):
    texts = ["a short one", "Melanie: We adopted a golden retriever puppy last month.", "x " * 50]
    small_batches = MiniLMMaxSimReranker(batch_size=1)

    one_batch = reranker.score("which dog did Melanie adopt", texts)
    one_by_one = small_batches.score("which dog did Melanie adopt", texts)
    reversed_input = reranker.score("which dog did Melanie adopt", texts[::-1])

    assert one_by_one == pytest.approx(one_batch, abs=1e-5)
    assert reversed_input[::-1] == pytest.approx(one_batch, abs=1e-5)


def test_no_texts_gives_no_scores_and_a_bare_string_is_refused(reranker):
    assert reranker.score("anything", []) == []
    with pytest.raises(TypeError, match="not a single str"):
        reranker.score("anything", "a string")


def test_a_query_of_only_stopwords_or_punctuation_still_scores(reranker):
    texts = ["what was it", "the weather"]

    assert len(reranker.score("what was it?", texts)) == 2
    assert reranker.score("?!", texts) == [0.0, 0.0]


def test_check_verifies_the_pinned_hashes(reranker):
    assert reranker.check() == "minilm-maxsim (all-MiniLM-L6-v2 int8 token states), sha256 ok"


def test_a_model_file_with_the_wrong_hash_is_refused(tmp_path):
    # given
    corrupt = tmp_path / "model.onnx"
    corrupt.write_bytes(b"not the model")
    reranker = MiniLMMaxSimReranker(model_path=str(corrupt))

    # when / then
    with pytest.raises(RerankError, match=r"has sha256 .*, expected 8199be6f"):
        reranker.score("q", ["a", "b"])
    with pytest.raises(RerankError, match=r"has sha256 .*, expected 8199be6f"):
        reranker.check()


def test_a_missing_model_file_is_a_rerank_error(tmp_path):
    reranker = MiniLMMaxSimReranker(model_path=str(tmp_path / "nope.onnx"))

    with pytest.raises(RerankError, match=r"nope.onnx is missing"):
        reranker.score("q", ["a", "b"])


@pytest.mark.django_db(transaction=True)
def test_scoring_inside_a_transaction_is_refused(reranker):
    with transaction.atomic(), pytest.raises(ProviderCallInTransaction):
        reranker.score("q", ["a", "b"])


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="THREADS must be >= 1"):
        MiniLMMaxSimReranker(threads=0)
    with pytest.raises(ValueError, match="BATCH_SIZE must be >= 1"):
        MiniLMMaxSimReranker(batch_size=0)


def test_get_reranker_defaults_to_maxsim_and_none_means_the_null_reranker():
    with override_settings(MEMORYHUB_PROVIDERS={"embedding": None, "llm": None}):
        default = get_reranker()
    with override_settings(MEMORYHUB_PROVIDERS={"rerank": MAXSIM}):
        configured = get_reranker()
    with override_settings(MEMORYHUB_PROVIDERS={"rerank": None}):
        null = get_reranker()

    assert (type(default), type(configured), type(null)) == (
        MiniLMMaxSimReranker,
        MiniLMMaxSimReranker,
        NullReranker,
    )
    assert null.score("q", ["a", "b", "c"]) == [0.0, 0.0, 0.0]


def test_system_check_reports_a_broken_rerank_entry():
    broken = {"CLASS": "apps.providers.rerank.maxsim.MiniLMMaxSimReranker", "CONFIG": {"X": 1}}
    with override_settings(MEMORYHUB_PROVIDERS={"embedding": None, "llm": None, "rerank": broken}):
        errors = check_providers()

    assert [e.id for e in errors] == ["providers.E001", "providers.E003"]
    assert "MiniLMMaxSimReranker rejected CONFIG" in errors[1].msg


def test_a_query_word_every_text_matches_weighs_less():
    # given: word 0 matches both texts at 0.9, word 1 matches one at 0.8 and one at 0.2
    best = np.array([[0.9, 0.2], [0.9, 0.8]], dtype=np.float32)

    # when
    weights = _word_weights(best)

    # then: weights exp(-5 x mean) normalised: e^-4.5 : e^-2.5
    assert weights == pytest.approx([1 / (1 + math.e**2), 1 / (1 + math.e**-2)], abs=1e-6)
    assert (best @ weights).tolist() == pytest.approx([0.28344, 0.81192], abs=1e-5)
