"""Pluggable edges: embedders, chat models and the offline token counter.

Chosen from `settings.MEMORYHUB_PROVIDERS` (see docs/providers.md); this package imports
nothing from the domain apps and defines no models.
"""
