"""Error memory: remember_error, search_error_memory, read_error_memory; and learnings:
learning_add."""

from pydantic import Field

from apps.agents.schemas import ReadFor
from apps.api import errors as errors_api
from apps.api import learnings as learnings_api
from apps.learnings.models import ErrorRecord
from apps.learnings.schemas import ErrorIn, ErrorQuery, ErrorSearchIn, LearningIn
from apps.mcp.tools import words
from apps.mcp.tools.base import READ, About, Answer, Tool, ToolRequest, part, whole, write


class ReadIn(ErrorQuery):
    error_id: int | None = Field(
        None, description="One record's id, from an earlier answer. Left out: the list."
    )


def _read(request: ToolRequest, args: ReadIn) -> ErrorRecord | Answer:
    if args.error_id is not None:
        return errors_api.get_error(
            request, error_id=args.error_id, query=ReadFor(user=args.user, all_users=args.all_users)
        )
    found = errors_api.list_errors(request, query=part(args, ErrorQuery))
    return Answer(errors_api.list_errors, found)


# Issue 39: error memory is every user's, with personal data masked; the user's own raw.
USER_ERRORS = (
    "The end user the failure happened for (your own id for them, e.g. telegram:42): the "
    "record every user sees has their personal data masked; their own reads show it as "
    "given. Left out: the session's user, if any."
)
USER_ERROR_READS = (
    "Act for one of your end users (your own id for them): their own failures show as "
    "given; everyone else's always have personal data masked."
)

_OUTCOME = (
    "open (not solved yet), resolved (the strategy worked), failed (it did not) or abandoned."
)

REMEMBER = About(
    title="Remember a tool failure",
    brief=(
        "Record a tool failure and what you tried (`strategy`), then its `outcome` and "
        "`resolution`, so later sessions reuse a fix. Returns the record."
    ),
    brief_omits=("arguments", "context"),
    description="""
        Record a tool failure and what you tried about it, so that you and your later
        sessions avoid a failed approach and reuse a fix. Recording the same tool, error and
        `strategy` again updates that record's `outcome` and `resolution` (for example once
        the fix worked) and counts the error as seen again. A record expires after a while
        unless it keeps being seen.

        Returns the record, with its `id`, `hit_count` and `expires_at`.
        """,
    # A repeat may overwrite the outcome and resolution, and counts another sighting.
    hints=write(destructive=True, idempotent=False),
    docs={
        "tool_name": "The tool that failed.",
        "error": "The error message, as the tool gave it.",
        "arguments": "The arguments of the failed call (a JSON object).",
        "context": "Anything else worth knowing about the situation (a JSON object).",
        "strategy": "What you tried, or are trying, about the error.",
        "outcome": f"How it ended: {_OUTCOME} Default: open.",
        "resolution": "What fixed it, once resolved.",
        "session_id": words.SESSION_OPTIONAL,
        "user": USER_ERRORS,
    },
)

SEARCH = About(
    title="Look up past tool failures",
    brief=(
        "Before retrying a failed tool, look up similar past failures: what was tried, how it "
        "ended, what fixed it. Returns `items`, best first."
    ),
    description="""
        Before retrying a tool that failed, look up similar failures: the records whose text
        contains the query or means something close to it, best first, for any tool or one.
        Each tells what was tried (`strategy`), how it ended (`outcome`) and what fixed it
        (`resolution`). A record found here does not expire as soon.

        Returns `items` (each `record` with its `score`) and `degraded` (searches that could
        not run).
        """,
    hints=READ,
    docs={
        "query": "The error message, or the problem in your own words.",
        "tool_name": "Only failures of this tool.",
        "k": "How many records to return at most.",
        "user": USER_ERROR_READS,
        "session_id": "Search for the user of this session (its id or your key for it).",
        "all_users": words.ALL_USERS,
    },
)

READ_ERRORS = About(
    title="Read recorded tool failures",
    description="""
        Read your recorded tool failures. With `error_id`: that one record. Without it: the
        records that have not expired, newest first, of one tool or one outcome if you say
        so, a page at a time. Reading a record does not count as seeing the error again.

        Returns one record, or `items` and `next_cursor` (null on the last page).
        """,
    hints=READ,
    docs={
        "tool_name": "List only this tool's failures.",
        "outcome": f"List only the records with this outcome: {_OUTCOME}",
        "cursor": words.CURSOR,
        "limit": "How many records a page holds at most.",
        "user": USER_ERROR_READS,
        "all_users": words.ALL_USERS,
    },
)

LEARNING = About(
    title="Keep a lesson",
    description="""
        Keep a lesson for later: a mistake you made (kind error) or a correction the user
        gave you (kind correction), in a sentence or two. Active lessons appear in every
        get_context, so the mistake is not made again.

        Returns the learning, with its `id` and `status`.
        """,
    # Each call adds a learning.
    hints=write(destructive=False, idempotent=False),
    docs={
        "user": words.USER_WRITES,
        "scope": words.SCOPE_WRITES,
        "kind": "error (a mistake of yours) or correction (the user corrected you).",
        "content": "The lesson, said so that it can be followed later (e.g. \"This user's "
        'dates are day/month/year").',
        "source": "Who it came from: agent (you; the default) or user.",
        "session_id": words.SESSION_OPTIONAL,
    },
)

TOOLS = [
    whole("remember_error", errors_api.remember_error, ErrorIn, REMEMBER),
    whole("search_error_memory", errors_api.search_errors, ErrorSearchIn, SEARCH),
    Tool(
        name="read_error_memory",
        endpoint=errors_api.get_error,
        params=ReadIn,
        call=_read,
        about=READ_ERRORS,
        answers=(errors_api.list_errors,),
    ),
    whole("learning_add", learnings_api.add_learning, LearningIn, LEARNING),
]
