"""The one write path for entries (seed 003). Modules: entry_writes (Add, Rename, Alias,
Write, Remove, archives), workspace_restore (an uploaded workspace written), entry_erasure (a
user's entries). Import from this package."""

from apps.entries.services.entry_erasure import entries_erase_user
from apps.entries.services.entry_writes import (
    Resolved,
    archive_name_free,
    entry_add,
    entry_alias,
    entry_append,
    entry_archive_add,
    entry_archives_remove,
    entry_change_record,
    entry_index_set,
    entry_put,
    entry_remove,
    entry_rename,
    entry_set_content,
    entry_write,
)
from apps.entries.services.workspace_restore import ImportResult, workspace_import, workspace_write

__all__ = [
    "ImportResult",
    "Resolved",
    "archive_name_free",
    "entries_erase_user",
    "entry_add",
    "entry_alias",
    "entry_append",
    "entry_archive_add",
    "entry_archives_remove",
    "entry_change_record",
    "entry_index_set",
    "entry_put",
    "entry_remove",
    "entry_rename",
    "entry_set_content",
    "entry_write",
    "workspace_import",
    "workspace_write",
]
