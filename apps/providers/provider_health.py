"""Health of the configured providers.

`provider_status` verifies what each provider can check locally (no network, no model run).
`provider_probe` asks the real thing (the embedder embeds one short text, the LLM server
answers GET /models) with a short timeout, and keeps each answer in Django's cache for
MEMORYHUB_HEALTH_PROBE_SECONDS, so /healthz stays cheap and a down provider is not hammered.
"""

import copy
import hashlib
import logging
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from apps.providers._http import check_base_url
from apps.providers.embeddings import EMBEDDING_DIMENSIONS, EmbeddingError, get_embedder
from apps.providers.llm import get_chat_model
from apps.providers.loading import provider_spec

logger = logging.getLogger(__name__)

PROBE_TEXT = "memoryhub health probe"
_CACHE_PREFIX = "memoryhub:health-probe:"
P = TypeVar("P")  # a provider


@dataclass(frozen=True)
class ProviderStatus:
    """`name` is the model name ("none" when not configured); `detail` is for humans."""

    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class ProbeResult:
    """One probe's answer; `checked_at` is when the provider was actually contacted (UTC)."""

    ok: bool
    detail: str
    checked_at: str


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
    """Local status of the "embedding" and "llm" providers; nothing is contacted."""
    return {"embedding": _embedding_status(), "llm": _llm_status()}


def _short_timeout(provider: P) -> P:
    """A copy of `provider` whose `timeout` is at most the probe timeout: the probe must
    answer quickly even when the configured timeout is generous (30 s for real work)."""
    limit = float(settings.MEMORYHUB_HEALTH_PROBE_TIMEOUT)
    timeout = getattr(provider, "timeout", None)
    if not isinstance(timeout, (int, float)) or timeout <= limit:
        return provider
    probe = copy.copy(provider)
    setattr(probe, "timeout", limit)  # noqa: B010 - P is any provider; it has one (above)
    return probe


def _probe_embedding() -> tuple[bool, str]:
    status = _embedding_status()
    if not status.ok:
        return False, status.detail
    embedder = _short_timeout(get_embedder())
    try:
        vector = embedder.embed([PROBE_TEXT])[0]
    except EmbeddingError as exc:
        return False, str(exc) or type(exc).__name__
    if len(vector) != EMBEDDING_DIMENSIONS:
        return False, (
            f"{embedder.name} produces {len(vector)}-d vectors; the vector columns hold "
            f"{EMBEDDING_DIMENSIONS}"
        )
    where = f" via {embedder.url}/embeddings" if hasattr(embedder, "url") else ""
    return True, f"{embedder.name}, {embedder.dimensions}-d{where}: embedded a probe text"


def _get_status(url: str, api_key: str, timeout: float) -> int:
    """The HTTP status of GET `url`; raises OSError when there is no HTTP answer."""
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(check_base_url(url), headers=headers)  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _probe_llm() -> tuple[bool, str]:
    status = _llm_status()
    if not status.ok or status.name == "none":
        return status.ok, status.detail
    model = get_chat_model()
    url = getattr(model, "url", None)
    if model is None or not url:  # no HTTP endpoint: the local check is all there is
        return True, status.detail
    endpoint = f"{url}/models"  # the cheap route: no tokens generated, nothing billed
    timeout = float(settings.MEMORYHUB_HEALTH_PROBE_TIMEOUT)
    try:
        code = _get_status(endpoint, getattr(model, "_api_key", ""), timeout)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, f"cannot reach {endpoint}: {reason}"
    if code in (401, 403):
        return False, f"{endpoint} rejected the API key (HTTP {code})"
    if code >= 500:
        return False, f"HTTP {code} from {endpoint}"
    # 404 too: some servers have no /models route, but an HTTP answer proves they are up.
    return True, f"{model.name} via {url}: reachable (GET /models answered {code})"


_PROBES = {"embedding": _probe_embedding, "llm": _probe_llm}


def _cache_key(kind: str) -> str | None:
    try:
        spec = provider_spec(kind)
    except ImproperlyConfigured:
        return None  # reported by the probe itself, and cheap to find again
    identity = spec.cache_key() if spec is not None else f"{kind}:none"
    return _CACHE_PREFIX + hashlib.sha256(identity.encode()).hexdigest()[:32]


def _cache_get(key: str) -> object:
    try:
        return cache.get(key)
    except Exception:  # a down cache must not take /healthz with it
        logger.warning("health probe cache unavailable", exc_info=True)
        return None


def _cache_set(key: str, value: dict) -> None:
    try:
        cache.set(key, value, timeout=settings.MEMORYHUB_HEALTH_PROBE_SECONDS)
    except Exception:  # see _cache_get
        logger.warning("health probe cache unavailable", exc_info=True)


def provider_probe(kind: str) -> ProbeResult:
    """The provider's real state, from the cache when probed in the last
    MEMORYHUB_HEALTH_PROBE_SECONDS (a failed probe is cached too)."""
    key = _cache_key(kind)
    cached = _cache_get(key) if key else None
    if isinstance(cached, dict):
        return ProbeResult(**cached)
    ok, detail = _PROBES[kind]()
    result = ProbeResult(ok=ok, detail=detail, checked_at=datetime.now(UTC).isoformat())
    if key:
        _cache_set(key, asdict(result))
    return result


def providers_report() -> tuple[str, dict, bool]:
    """/healthz entry: each provider's probed state; ok only when every provider is."""
    body = {kind: asdict(provider_probe(kind)) for kind in _PROBES}
    return "providers", body, all(entry["ok"] for entry in body.values())
