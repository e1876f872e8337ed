"""Memory: memory_save, memory_recall, memory_search and get_context."""

from apps.api import context as context_api
from apps.api import memory as memory_api
from apps.mcp.tools import words
from apps.mcp.tools.base import READ, About, whole, write
from apps.memory.schemas import ContextIn, RecallIn, SaveIn, SearchIn

SAVE = About(
    title="Remember a fact",
    brief=(
        "Save one fact to long-term memory (a preference, a decision, a date). A fact with the "
        "same `key` or meaning is updated, not doubled. Returns the `fact` and `action` "
        "(created, updated or reinforced)."
    ),
    brief_omits=("review",),
    brief_docs={"session_id": "The session it comes from: then it is that session's user's."},
    description="""
        Save one fact to long-term memory: something you were told or found out, such as
        "The user's cat is called Whiskerino", a preference, a decision or a date.
        memory_recall and memory_search find it again, and your most important facts appear
        in every get_context. A fact already known is not doubled: the same text strengthens
        it, and a fact under the same `key` (or with almost the same meaning) in its
        category is updated to the new wording, its earlier value kept in the fact's
        history. Each save is also noted in today's log.

        Returns the `fact`, `action` (created, updated or reinforced), `deduped` and
        `existing_id` when an existing fact took the save, `similarity`, and `log`: the
        daily log the save was noted in ("" while the fact waits for review).
        """,
    # A save may replace a fact's value, and each one is noted in the log again.
    hints=write(destructive=True, idempotent=False),
    docs={
        "user": words.USER_WRITES,
        "scope": words.SCOPE_WRITES,
        "content": "The fact, as one sentence that makes sense on its own.",
        "category": "A category such as preferences or pets. Left out, the closest existing "
        "category is chosen (or general).",
        "key": "A short, stable name for the fact within its category (e.g. cat_name). "
        "Saving under the same key again replaces the value. Left out, one is made from the "
        "first words.",
        "importance": "How much the fact matters, from 0 to 1 (default: your usual "
        "importance). Important facts rank higher and appear in get_context.",
        "session_id": "The session the fact comes from (its id or your key for it): the "
        "fact then belongs to that session's user.",
        "review": "Ask for a person to approve the fact before it is used. Only when review "
        "is switched on for you; otherwise it is ignored.",
    },
)

RECALL = About(
    title="Recall facts",
    brief=(
        "Find saved facts that answer a question, by meaning. Use it before answering anything "
        "that depends on what you were told earlier. Returns `items`, best first, each a `fact` "
        "with its `score`."
    ),
    brief_docs={"session_id": "Recall as in this session: your memory and its user's."},
    description="""
        Find the saved facts that answer a question, by meaning: first within the categories
        that match the question, then among all facts when those give too little. Use it
        before answering anything that depends on what you were told earlier. A recalled
        fact counts as used, which keeps it ranked higher later.

        Returns `items`, best first (each `fact` with its `similarity` and `score`), the
        `categories` searched, `fell_back` (true when the search went beyond them) and
        `degraded` (searches that could not run).
        """,
    hints=READ,
    docs={
        "user": words.USER_READS,
        "all_users": words.ALL_USERS,
        "query": "The question or topic, in plain words.",
        "session_id": "Recall as in this session (its id or your key for it): your memory "
        "and that of the session's user.",
        "category": "Search this category only.",
        "k": "How many facts to return at most (default: your usual number, often 5).",
    },
)

SEARCH = About(
    title="Search all of memory",
    brief=(
        "Search everything at once (documents, notes, facts, learnings, history) by words and "
        "meaning. Returns `items`, best first, each with `source`, `name`, `content` and `score`."
    ),
    description="""
        Search everything you keep at once, by words and by meaning: the workspace
        documents (MEMORY.md, USER.md and the others), entries, facts, learnings and the
        history log, in one ranked list. Use it when you do not know where something is
        kept; for past conversations use search_chat_history, for facts alone
        memory_recall.

        Returns `items`, best first, each with `source` (document, entry, fact, learning or
        history), `id`, `name`, `content` and `score`, and `degraded` (searches that could
        not run: keyword results then stand in).
        """,
    hints=READ,
    docs={
        "user": words.USER_READS,
        "all_users": words.ALL_USERS,
        "query": "What to look for, in plain words.",
        "session_id": "Search as in this session (its id or your key for it): your memory "
        "and that of the session's user.",
        "k": "How many hits to return at most (default: your usual number, often 10).",
    },
)

CONTEXT = About(
    title="Build the context for your next reply",
    brief=(
        "Call at the start of each turn and put the result in your prompt: your documents, "
        "important facts, the session's relevant messages and, given `query`, dated passages of "
        "past conversations, within a token budget."
    ),
    brief_docs={
        "lifecycle": (
            "When your context gets full: background (default) saves facts and compacts in the "
            "background, wait does it first, off only reports it."
        ),
        "max_tokens": "The token budget (default: yours, often 8192).",
    },
    description="""
        Assemble what you need for the next turn of a session, within a token budget: your
        workspace documents (SOUL.md, AGENTS.md, USER.md, MEMORY.md), the session's summary,
        active learnings, hints about tools that failed, your most important facts, the
        session's recent, important and relevant messages and, given a `query`, matching
        passages from all your past conversations, each dated and labelled with its
        session. Call it at the start of a turn and put the result in your prompt.

        It also watches how full your model's context is: past the thresholds set for you,
        it saves facts from the conversation and compacts the session, moving its older
        messages to an archive entry (in the background by default; see `lifecycle`).

        Returns `system` (`parts`: documents, summary, learnings, hints; and `facts`),
        `messages` (this session's, oldest first), `memory` (dated windows of past
        conversations), `tokens` (what each part costs), `usage` (how full your context is,
        and what was done about it) and `dropped` (what did not fit the budget).
        """,
    # It may save facts and compact the session (lifecycle), deleting nothing.
    hints=write(destructive=False, idempotent=False),
    docs={
        "user": words.USER_SESSION,
        "session_id": words.SESSION,
        "query": "What the next reply is about, usually the user's latest message. Given, "
        "the session's relevant messages and matching passages of all your past "
        "conversations are added.",
        "max_tokens": "The token budget for the whole context (default: your usual budget, "
        "often 8192).",
        "lifecycle": "What to do when your context is getting full: background (the "
        "default) has facts saved and the session compacted in the background; wait does "
        "it before answering and returns the context as it is afterwards; off only reports "
        "it in `usage`.",
        "observed_tokens": "Your model's own count of the input tokens of your last prompt, "
        "if you have it. It replaces memoryhub's estimate of how full your context is.",
    },
)

TOOLS = [
    whole("memory_save", memory_api.memory_save, SaveIn, SAVE),
    whole("memory_recall", memory_api.memory_recall, RecallIn, RECALL),
    whole("memory_search", memory_api.memory_search, SearchIn, SEARCH),
    whole("get_context", context_api.get_context, ContextIn, CONTEXT),
]
