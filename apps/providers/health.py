"""Health of the configured providers, cheap enough for a status endpoint.

Nothing is embedded and no server is contacted: the check builds each provider and asks
it to verify what it can locally (MiniLM hashes its model files).
"""

from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

from apps.providers.embeddings import EmbeddingError, get_embedder
from apps.providers.llm import get_chat_model


@dataclass(frozen=True)
class ProviderStatus:
    """`name` is the model name ("none" when not configured); `detail` is for humans."""

    name: str
    ok: bool
    detail: str


def _embedding_status() -> ProviderStatus:
    try:
        embedder = get_embedder()
    except ImproperlyConfigured as exc:
        return ProviderStatus(name="none", ok=False, detail=f"misconfigured: {exc}")
    check = getattr(embedder, "check", None)
    try:
        detail = check() if callable(check) else f"{embedder.name}, {embedder.dimensions}-d"
    except EmbeddingError as exc:
        return ProviderStatus(name=embedder.name, ok=False, detail=str(exc))
    return ProviderStatus(name=embedder.name, ok=True, detail=detail)


def _llm_status() -> ProviderStatus:
    try:
        model = get_chat_model()
    except ImproperlyConfigured as exc:
        return ProviderStatus(name="none", ok=False, detail=f"misconfigured: {exc}")
    if model is None:
        return ProviderStatus(name="none", ok=True, detail="not configured — extractive fallback")
    check = getattr(model, "check", None)
    return ProviderStatus(
        name=model.name, ok=True, detail=check() if callable(check) else f"{model.name}"
    )


def provider_status() -> dict[str, ProviderStatus]:
    """Status of the "embedding" and "llm" providers."""
    return {"embedding": _embedding_status(), "llm": _llm_status()}


def providers_report() -> tuple[str, dict, bool]:
    """/healthz entry: each provider's status; informative, never makes /healthz fail."""
    body = {name: {"ok": p.ok, "detail": p.detail} for name, p in provider_status().items()}
    return "providers", body, True
