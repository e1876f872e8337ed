"""The reads of entries. Modules: entry_lookup (by name or alias, pages, searches),
workspace_export (the workspace archive written), workspace_read (an uploaded archive read
and checked). Import from this package."""

from apps.entries.selectors.entry_lookup import (
    ArchiveOrigin,
    EntryHit,
    archives_under,
    documents,
    entries_all,
    entries_named,
    entries_page,
    entries_search,
    entries_searchable,
    entries_visible,
    entry_get,
)
from apps.entries.selectors.workspace_export import FORMAT, MANIFEST, VERSION, workspace_export
from apps.entries.selectors.workspace_read import WorkspaceArchive, WorkspaceItem, workspace_read

__all__ = [
    "FORMAT",
    "MANIFEST",
    "VERSION",
    "ArchiveOrigin",
    "EntryHit",
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
