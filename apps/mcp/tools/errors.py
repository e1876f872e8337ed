"""Error memory (seed 000): remember_error, search_error_memory, read_error_memory; and
learnings: learning_add."""

from pydantic import Field

from apps.learnings.schemas import ErrorIn, ErrorSearchIn, LearningIn
from apps.mcp.tools.base import Answer, Tool
from apps.memory import learnings_api


class ReadIn(learnings_api.ErrorQuery):
    error_id: int | None = Field(None, description="One record; without it, the list.")


def _read(request, args: ReadIn):
    if args.error_id is not None:
        return learnings_api.get_error(request, error_id=args.error_id)
    query = learnings_api.ErrorQuery(
        tool_name=args.tool_name, outcome=args.outcome, cursor=args.cursor, limit=args.limit
    )
    return Answer(learnings_api.list_errors, learnings_api.list_errors(request, query=query))


TOOLS = [
    Tool(
        name="remember_error",
        endpoint=learnings_api.remember_error,
        params=ErrorIn,
        call=lambda request, args: learnings_api.remember_error(request, payload=args),
    ),
    Tool(
        name="search_error_memory",
        endpoint=learnings_api.search_errors,
        params=ErrorSearchIn,
        call=lambda request, args: learnings_api.search_errors(request, payload=args),
    ),
    Tool(
        name="read_error_memory",
        endpoint=learnings_api.get_error,
        params=ReadIn,
        call=_read,
        description=(
            "With `error_id`: one record (GET /errors/{id}; reading it is not a hit). "
            "Without: the live records, newest first (GET /errors), filtered by `tool_name` "
            "and `outcome`, paginated by `cursor` and `limit`."
        ),
    ),
    Tool(
        name="learning_add",
        endpoint=learnings_api.add_learning,
        params=LearningIn,
        call=lambda request, args: learnings_api.add_learning(request, payload=args),
    ),
]
