"""The reads of sessions and messages. Modules: session_lookup (a session and what it keeps),
message_order (a session's messages in order), window_view (the window a session shows),
chat_history_search (search_chat_history: message search with context windows). Import from
this package."""

from apps.conversations.selectors.chat_history_search import (
    MODES,
    ContextWindow,
    SearchHit,
    SearchResult,
    message_search,
    windows_touching,
)
from apps.conversations.selectors.message_order import (
    after,
    before,
    hot_messages,
    messages_left_window,
    messages_page,
    session_messages,
    session_recent_messages,
    unconsolidated_messages,
    window_first,
)
from apps.conversations.selectors.session_lookup import (
    as_utc,
    session_get,
    session_markers,
    session_meta,
    session_summary,
    sessions_page,
    user_sessions,
)
from apps.conversations.selectors.window_view import (
    TURN_LOOKBACK,
    Window,
    session_recap,
    session_window,
    window_messages,
)

__all__ = [
    "MODES",
    "TURN_LOOKBACK",
    "ContextWindow",
    "SearchHit",
    "SearchResult",
    "Window",
    "after",
    "as_utc",
    "before",
    "hot_messages",
    "message_search",
    "messages_left_window",
    "messages_page",
    "session_get",
    "session_markers",
    "session_messages",
    "session_meta",
    "session_recap",
    "session_recent_messages",
    "session_summary",
    "session_window",
    "sessions_page",
    "unconsolidated_messages",
    "user_sessions",
    "window_first",
    "window_messages",
    "windows_touching",
]
