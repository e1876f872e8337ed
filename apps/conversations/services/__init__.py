"""The one write path for sessions and messages. Modules: session_writes (create, update, clear,
remove), message_append (append, mark consolidated), tool_results (the append's rule: a tool
message answers a call of its session), cursors (summary, flush, compaction's cut),
pop (the newest message removed, before the lifecycle used it), session_erasure (a user's
sessions). Import from this package."""

from apps.conversations.services.cursors import (
    Cursor,
    WindowCut,
    compact_marker_add,
    flush_cursor_write,
    summary_write,
)
from apps.conversations.services.message_append import (
    AppendResult,
    NewMessage,
    message_bytes,
    messages_append,
    messages_mark_consolidated,
)
from apps.conversations.services.pop import message_pop
from apps.conversations.services.session_erasure import sessions_erase_user
from apps.conversations.services.session_writes import (
    ResetResult,
    session_clear,
    session_create,
    session_remove,
    session_update,
)

__all__ = [
    "AppendResult",
    "Cursor",
    "NewMessage",
    "ResetResult",
    "WindowCut",
    "compact_marker_add",
    "flush_cursor_write",
    "message_bytes",
    "message_pop",
    "messages_append",
    "messages_mark_consolidated",
    "session_clear",
    "session_create",
    "session_remove",
    "session_update",
    "sessions_erase_user",
    "summary_write",
]
