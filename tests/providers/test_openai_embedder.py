"""OpenAIEmbedder against a real loopback HTTP server."""

import time

import pytest

from apps.providers.embeddings.base import EmbeddingError
from apps.providers.embeddings.fake import HashEmbedder
from apps.providers.embeddings.openai import OpenAIEmbedder
from tests.support.llm_server import Delay, Drop, Embeddings, Raw, Status, unused_port_url


def make(url, **overrides):
    options = {"url": url, "model": "all-MiniLM-L6-v2", "api_key": "sk-embed", "timeout": 5}
    return OpenAIEmbedder(**{**options, **overrides})


def test_success_returns_the_servers_vectors_and_sends_model_and_key(llm_server):
    # given: the server embeds with the deterministic hash embedder
    embedder = make(llm_server.url)

    # when
    vectors = embedder.embed(["first text", "second text"])

    # then
    expected = HashEmbedder().embed(["first text", "second text"])
    assert [[round(x, 12) for x in v] for v in vectors] == [
        [round(x, 12) for x in v] for v in expected
    ]
    (request,) = llm_server.requests
    assert request.path == "/v1/embeddings"
    assert request.headers["Authorization"] == "Bearer sk-embed"
    assert request.body == {"model": "all-MiniLM-L6-v2", "input": ["first text", "second text"]}


def test_vectors_are_reordered_by_index_and_renormalised(llm_server):
    llm_server.script(
        Raw(
            '{"data": [{"index": 1, "embedding": [0, 0, 0, 2]},'
            ' {"index": 0, "embedding": [3, 4, 0, 0]}]}'
        )
    )

    vectors = make(llm_server.url, dimensions=4).embed(["a", "b"])

    assert vectors == [[0.6, 0.8, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]


def test_texts_are_sent_in_batches(llm_server):
    embedder = make(llm_server.url, batch_size=2)

    vectors = embedder.embed(["a", "b", "c", "d", "e"])

    assert len(vectors) == 5
    assert [r.body["input"] for r in llm_server.requests] == [["a", "b"], ["c", "d"], ["e"]]


def test_no_texts_means_no_request(llm_server):
    assert make(llm_server.url).embed([]) == []
    assert llm_server.requests == []


def test_without_a_key_no_authorization_header_is_sent(llm_server):
    make(llm_server.url, api_key="").embed(["a"])

    assert "Authorization" not in llm_server.requests[0].headers


def test_http_500_raises_embedding_error(llm_server):
    llm_server.script(Status(500, "model crashed"))

    with pytest.raises(EmbeddingError) as info:
        make(llm_server.url).embed(["a"])

    assert str(info.value) == (
        f"embedding request failed: HTTP 500 from {llm_server.url}/embeddings: model crashed"
    )


def test_slow_answer_raises_embedding_error_after_the_timeout(llm_server):
    llm_server.script(Delay(3))
    started = time.monotonic()

    with pytest.raises(EmbeddingError) as info:
        make(llm_server.url, timeout=0.2).embed(["a"])

    assert time.monotonic() - started < 2
    assert str(info.value) == (
        f"embedding request failed: no answer from {llm_server.url}/embeddings within 0.2 s"
    )


def test_malformed_json_raises_embedding_error(llm_server):
    llm_server.script(Raw('{"data": [{"index": 0, "embedding": [0.1, '))

    with pytest.raises(EmbeddingError, match="answered non-JSON"):
        make(llm_server.url).embed(["a"])


def test_wrong_dimensions_raise_embedding_error(llm_server):
    llm_server.script(Embeddings([[0.1, 0.2, 0.3]]))

    with pytest.raises(EmbeddingError) as info:
        make(llm_server.url, dimensions=384).embed(["a"])

    assert str(info.value) == (
        f"{llm_server.url}/embeddings returned 3-d vectors for model 'all-MiniLM-L6-v2', "
        "configured DIMENSIONS is 384"
    )


def test_wrong_number_of_vectors_raises_embedding_error(llm_server):
    llm_server.script(Embeddings([[1.0] * 384]))

    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
        make(llm_server.url).embed(["a", "b"])


def test_zero_vector_raises_embedding_error(llm_server):
    llm_server.script(Embeddings([[0.0] * 384]))

    with pytest.raises(EmbeddingError, match="zero or non-finite vector"):
        make(llm_server.url).embed(["a"])


def test_dropped_connection_raises_embedding_error(llm_server):
    llm_server.script(Drop())

    with pytest.raises(EmbeddingError, match=r"connection to .* failed: RemoteDisconnected"):
        make(llm_server.url).embed(["a"])


def test_closed_port_raises_embedding_error():
    with pytest.raises(EmbeddingError, match=r"cannot reach .*Connection refused"):
        make(unused_port_url()).embed(["a"])


def test_a_non_http_url_is_rejected_at_construction():
    with pytest.raises(ValueError, match="must be an http"):
        make("file:///etc/passwd")
