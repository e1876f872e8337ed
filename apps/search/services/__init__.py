"""Writes the search layer owns (re-exported from their modules)."""

from apps.search.services.indexes import search_index_purge, search_indexes_rebuild

__all__ = ["search_index_purge", "search_indexes_rebuild"]
