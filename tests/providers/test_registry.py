"""Building providers from MEMORYHUB_PROVIDERS, caching them, and reporting their health."""

import os

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from apps.providers.checks import check_providers
from apps.providers.embeddings import embed_texts, get_embedder
from apps.providers.embeddings.fake import HashEmbedder
from apps.providers.embeddings.openai import OpenAIEmbedder
from apps.providers.llm import get_chat_model
from apps.providers.llm.openai import OpenAIChat
from apps.providers.provider_health import ProviderStatus, provider_status

HASH = {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}}
MINILM = {"CLASS": "apps.providers.embeddings.minilm.MiniLMEmbedder", "CONFIG": {"THREADS": 1}}
CHAT = {
    "CLASS": "apps.providers.llm.openai.OpenAIChat",
    "CONFIG": {"URL": "http://127.0.0.1:9/v1", "MODEL": "gpt-test", "API_KEY": "k", "TIMEOUT": 3},
}


def providers(embedding=HASH, llm=None):
    return override_settings(MEMORYHUB_PROVIDERS={"embedding": embedding, "llm": llm})


def test_embedder_is_built_from_settings_and_cached():
    with providers():
        first, second = get_embedder(), get_embedder()

    assert isinstance(first, HashEmbedder)
    assert first is second


def test_changed_settings_give_a_fresh_embedder():
    with providers():
        hashed = get_embedder()
    with providers({"CLASS": HASH["CLASS"], "CONFIG": {"DIMENSIONS": 16}}):
        smaller = get_embedder()

    assert (hashed.dimensions, smaller.dimensions) == (384, 16)


def test_config_keys_become_lower_case_keyword_arguments():
    config = {"URL": "http://127.0.0.1:9/v1/", "MODEL": "m", "DIMENSIONS": 8, "TIMEOUT": 2}
    with providers({"CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder", "CONFIG": config}):
        embedder = get_embedder()

    assert isinstance(embedder, OpenAIEmbedder)
    assert (embedder.url, embedder.name, embedder.dimensions, embedder.timeout) == (
        "http://127.0.0.1:9/v1",
        "m",
        8,
        2.0,
    )


def test_without_an_embedding_entry_the_offline_minilm_is_used():
    from apps.providers.embeddings.minilm import MiniLMEmbedder

    with override_settings(MEMORYHUB_PROVIDERS={}):
        embedder = get_embedder()

    assert isinstance(embedder, MiniLMEmbedder)
    # THREADS 0: every core this process may run on (one worker per machine)
    assert (embedder.threads, embedder.batch_size) == (len(os.sched_getaffinity(0)), 32)


def test_minilm_threads_are_the_given_count_or_every_available_core():
    from apps.providers.embeddings.minilm import MiniLMEmbedder

    cores = len(os.sched_getaffinity(0))
    assert [MiniLMEmbedder(threads=t).threads for t in (0, 1, 3)] == [cores, 1, 3]
    with pytest.raises(
        ValueError, match=r"THREADS must be >= 0 \(0: every available core\), got -1"
    ):
        MiniLMEmbedder(threads=-1)


def test_minilm_spin_must_be_a_boolean():
    with (
        providers({"CLASS": MINILM["CLASS"], "CONFIG": {"SPIN": "false"}}),
        pytest.raises(ImproperlyConfigured, match="SPIN must be true or false, got 'false'"),
    ):
        get_embedder()


def test_embed_texts_uses_the_configured_embedder():
    with providers():
        assert embed_texts(["hello"]) == HashEmbedder().embed(["hello"])


def test_unknown_config_key_is_improperly_configured():
    with (
        providers({"CLASS": MINILM["CLASS"], "CONFIG": {"THREADZ": 2}}),
        pytest.raises(ImproperlyConfigured, match="unexpected keyword argument 'threadz'"),
    ):
        get_embedder()


def test_unimportable_class_is_improperly_configured():
    with (
        providers({"CLASS": "apps.providers.embeddings.nope.Nope"}),
        pytest.raises(
            ImproperlyConfigured, match=r"cannot import 'apps\.providers\.embeddings\.nope"
        ),
    ):
        get_embedder()


def test_chat_model_is_none_when_not_configured():
    with providers(llm=None):
        assert get_chat_model() is None


def test_chat_model_is_built_from_settings_and_cached():
    with providers(llm=CHAT):
        first, second = get_chat_model(), get_chat_model()

    assert isinstance(first, OpenAIChat)
    assert first is second
    assert (first.name, first.url, first.timeout) == ("gpt-test", "http://127.0.0.1:9/v1", 3.0)


def test_system_check_reports_each_broken_entry():
    broken_llm = {"CLASS": CHAT["CLASS"], "CONFIG": {"URL": "ftp://x", "MODEL": "m"}}
    with providers({"CLASS": "no.such.Class"}, broken_llm):
        errors = check_providers()

    assert [e.id for e in errors] == ["providers.E001", "providers.E002"]


def test_system_check_is_silent_when_configured_well():
    with providers(MINILM, CHAT):
        assert check_providers() == []


def test_health_with_fake_embedder_and_no_llm():
    with providers():
        assert provider_status() == {
            "embedding": ProviderStatus(
                name="fake-hash",
                ok=True,
                detail="fake-hash, 384-d, deterministic (tests and development only)",
            ),
            "llm": ProviderStatus(
                name="none", ok=True, detail="not configured — extractive fallback"
            ),
        }


@pytest.mark.slow
def test_health_verifies_minilm_files_without_embedding():
    with providers(MINILM, CHAT):
        status = provider_status()

    assert status == {
        "embedding": ProviderStatus(
            name="all-MiniLM-L6-v2",
            ok=True,
            detail="all-MiniLM-L6-v2 int8 ONNX, 384-d, sha256 ok, 1 thread(s), "
            "token states all-MiniLM-L6-v2/pca64-f8e8efff@int8",
        ),
        "llm": ProviderStatus(
            name="gpt-test",
            ok=True,
            detail="gpt-test via http://127.0.0.1:9/v1/chat/completions (not contacted)",
        ),
    }


def test_health_reports_a_model_file_that_fails_its_hash(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"tampered")
    config = {"MODEL_PATH": str(bad)}

    with providers({"CLASS": MINILM["CLASS"], "CONFIG": config}):
        status = provider_status()["embedding"]

    assert (status.name, status.ok) == ("all-MiniLM-L6-v2", False)
    assert status.detail.startswith(f"{bad} has sha256 ")


def test_health_reports_misconfiguration():
    with providers({"CLASS": "no.such.Class"}):
        status = provider_status()["embedding"]

    assert (status.name, status.ok) == ("none", False)
    assert status.detail.startswith(
        "misconfigured: MEMORYHUB_PROVIDERS['embedding']: cannot import"
    )
