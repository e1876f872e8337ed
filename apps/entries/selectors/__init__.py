"""The reads of entries. Modules: entry_lookup (by name or alias, pages), entry_search
(keyword, semantic and hybrid searches),
workspace_packing (the workspace archive written), workspace_unpacking (an uploaded archive read
and checked). Import from this package."""

from apps.entries.selectors.entry_lookup import (
    ArchiveOrigin,
    archives_under,
    documents,
    entries_all,
    entries_named,
    entries_page,
    entries_searchable,
    entries_visible,
    entry_get,
)
from apps.entries.selectors.entry_search import EntryHit, EntrySearch, entries_search
from apps.entries.selectors.workspace_packing import FORMAT, MANIFEST, VERSION, workspace_export
from apps.entries.selectors.workspace_unpacking import (
    WorkspaceArchive,
    WorkspaceItem,
    workspace_read,
)

__all__ = [
    "FORMAT",
    "MANIFEST",
    "VERSION",
    "ArchiveOrigin",
    "EntryHit",
    "EntrySearch",
    "WorkspaceArchive",
    "WorkspaceItem",
    "archives_under",
    "documents",
    "entries_all",
    "entries_named",
    "entries_page",
    "entries_search",
    "entries_searchable",
    "entries_visible",
    "entry_get",
    "workspace_export",
    "workspace_read",
]
