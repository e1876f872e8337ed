"""Builds providers from `settings.MEMORYHUB_PROVIDERS` and caches them per process.

Each entry is `{"CLASS": "dotted.path", "CONFIG": {...}}`; CONFIG keys are passed to the
class as lower-cased keyword arguments (`BATCH_SIZE` -> `batch_size=`).
"""

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

SETTING = "MEMORYHUB_PROVIDERS"
KINDS = ("embedding", "llm")


@dataclass(frozen=True)
class ProviderSpec:
    """One validated settings entry."""

    kind: str
    class_path: str
    config: Mapping[str, Any]  # Any: settings values, any type the provider's class takes

    def cache_key(self) -> str:
        # The settings dict is unhashable; its canonical JSON identifies it, so a test's
        # override_settings gets a fresh instance and restoring the settings reuses the old.
        return json.dumps([self.kind, self.class_path, self.config], sort_keys=True, default=repr)


# Any: settings values, any type the provider's class takes
def provider_spec(kind: str, default: Mapping[str, Any] | None = None) -> ProviderSpec | None:
    """The validated entry for `kind`, `default` when the setting lacks the key, None when null."""
    from django.conf import settings

    providers = getattr(settings, SETTING, None)
    if providers is None:
        providers = {}
    if not isinstance(providers, Mapping):
        raise ImproperlyConfigured(f"{SETTING} must be a dict, got {type(providers).__name__}")
    entry = providers.get(kind, default)
    if entry is None:
        return None
    where = f"{SETTING}[{kind!r}]"
    if not isinstance(entry, Mapping) or not isinstance(entry.get("CLASS"), str):
        raise ImproperlyConfigured(f'{where} must be None or {{"CLASS": "dotted.path", ...}}')
    unknown = set(entry) - {"CLASS", "CONFIG"}
    if unknown:
        raise ImproperlyConfigured(f"{where} has unknown keys {sorted(unknown)}")
    config = entry.get("CONFIG") or {}
    if not isinstance(config, Mapping) or not all(isinstance(k, str) for k in config):
        raise ImproperlyConfigured(f"{where}['CONFIG'] must be a dict with string keys")
    return ProviderSpec(kind=kind, class_path=entry["CLASS"], config=dict(config))


def build(spec: ProviderSpec) -> Any:  # Any: an instance of the class the settings name
    """Import the class and instantiate it with the CONFIG; raises ImproperlyConfigured."""
    where = f"{SETTING}[{spec.kind!r}]"
    try:
        cls = import_string(spec.class_path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"{where}: cannot import {spec.class_path!r}: {exc}") from exc
    kwargs = {key.lower(): value for key, value in spec.config.items()}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ImproperlyConfigured(f"{where}: {spec.class_path} rejected CONFIG: {exc}") from exc


class ProviderCache:
    """Instances by settings entry, built at most once per entry per process (thread-safe)."""

    # Bounded because every distinct override_settings in a test run adds an entry.
    MAX_ENTRIES = 32

    def __init__(self) -> None:
        self._instances: dict[str, Any] = {}  # Any: instances of the classes the settings name
        self._lock = threading.Lock()

    def get(self, spec: ProviderSpec) -> Any:  # Any: an instance of the class the settings name
        key = spec.cache_key()
        instance = self._instances.get(key)
        if instance is None:
            with self._lock:
                instance = self._instances.get(key)
                if instance is None:
                    instance = build(spec)
                    if len(self._instances) >= self.MAX_ENTRIES:
                        self._instances.clear()
                    self._instances[key] = instance
        return instance

    def clear(self) -> None:
        with self._lock:
            self._instances.clear()
