"""Search: search_chat_history (semantic, keyword, hybrid, contains) and search_history (a
substring search of the history log)."""

from apps.api import memory as memory_api
from apps.api import search as search_api
from apps.conversations.schemas import ChatSearchIn
from apps.lifecycle.schemas import HistoryQuery
from apps.mcp.tools import words
from apps.mcp.tools.base import READ, About, whole

CHAT = About(
    title="Search past conversations",
    brief=(
        "Search past conversations for what was said, in all sessions or one. Returns `hits`, "
        "best first, and `windows`: each hit among its neighbouring messages."
    ),
    brief_omits=("role", "after", "before", "metadata", "min_score"),
    description="""
        Search the messages of all your sessions, or of one, for what was said. `mode`:
        semantic (by meaning; the default), keyword (by words), hybrid (both, ranked
        together; usually the best) or contains (the exact text, case-insensitive, newest
        first). Filters narrow it to a session, roles, a time span or metadata.

        Returns `hits`, best first, each with its `score` and `window` (the index of the
        messages around it in `windows`), and `windows`: each hit among its neighbouring
        messages in its session. `degraded` lists the searches that could not run (when
        meaning-based search is unavailable, keyword results stand in).
        """,
    hints=READ,
    docs={
        "user": words.USER_READS,
        "all_users": words.ALL_USERS,
        "query": "What to look for: a question, words, or (for contains) the exact text.",
        "mode": "How to match: semantic (by meaning), keyword (by words), hybrid (both; "
        "usually the best) or contains (the exact text, case-insensitive).",
        "k": "How many hits to return at most.",
        "session_id": "Search only this session (its id or your key for it). Left out: your "
        "own sessions, with `user` theirs too, with all_users every session.",
        "role": "Only messages of this role, or of any of these roles: user, assistant, tool, "
        "system.",
        "after": "Only messages said after this time (ISO 8601).",
        "before": "Only messages said before this time (ISO 8601).",
        "metadata": "Only messages whose metadata holds all these key/value pairs.",
        "min_score": "Leave out hits that score below this. Scores of different modes are "
        "not comparable.",
    },
)

HISTORY = About(
    title="Search the history log",
    description="""
        Search your history log: the dated summaries of past conversations that
        consolidation writes (what happened, when, and in which session). It matches `q` as
        plain text, case-insensitive, newest first; without `q` it lists every entry. Filter
        by month or by session, and page through long results.

        Returns `items` (each with its text in `content`, its session, and the time span of
        the messages it sums up) and `next_cursor` (null on the last page).
        """,
    hints=READ,
    docs={
        "user": words.USER_READS,
        "all_users": words.ALL_USERS,
        "q": "The text to find, case-insensitive. Left out: every entry.",
        "month": "Only entries of this month, as YYYY-MM.",
        "session_id": "Only entries of this session (its id or your key for it).",
        "cursor": words.CURSOR,
        "limit": "How many entries a page holds at most.",
    },
)

TOOLS = [
    whole("search_chat_history", search_api.search_chat_history, ChatSearchIn, CHAT),
    whole("search_history", memory_api.history, HistoryQuery, HISTORY, into="query"),
]
