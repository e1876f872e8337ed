"""Writes the search layer owns (re-exported from their modules)."""

from apps.search.services.row_embedding import corpus_embed, embed_rows, states_replace
from apps.search.services.side_tables import search_index_purge, search_indexes_rebuild
from apps.search.services.vector_writes import states_write, vectors_write

__all__ = [
    "corpus_embed",
    "embed_rows",
    "search_index_purge",
    "search_indexes_rebuild",
    "states_replace",
    "states_write",
    "vectors_write",
]
