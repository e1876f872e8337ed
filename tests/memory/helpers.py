"""Shared bits for the long-term memory tests."""

MINILM = {"CLASS": "apps.providers.embeddings.minilm.MiniLMEmbedder", "CONFIG": {"THREADS": 1}}
HASH = {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}}
# Nothing listens on port 9 (discard): every embedding request fails fast.
BROKEN = {
    "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
    "CONFIG": {"URL": "http://127.0.0.1:9/v1", "MODEL": "none", "TIMEOUT": 2.0},
}


def use_embedder(settings, entry):
    settings.MEMORYHUB_PROVIDERS = {"embedding": entry, "llm": None}
