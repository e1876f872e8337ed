"""Error memory (seed 000): remember_error, search_error_memory, read_error_memory; and
learnings: learning_add."""

from pydantic import Field

from apps.api import learnings as learnings_api
from apps.learnings.schemas import ErrorIn, ErrorQuery, ErrorSearchIn, LearningIn
from apps.mcp.tools.base import Answer, Tool, part, whole


class ReadIn(ErrorQuery):
    error_id: int | None = Field(None, description="One record; without it, the list.")


def _read(request, args: ReadIn):
    if args.error_id is not None:
        return learnings_api.get_error(request, error_id=args.error_id)
    found = learnings_api.list_errors(request, query=part(args, ErrorQuery))
    return Answer(learnings_api.list_errors, found)


TOOLS = [
    whole("remember_error", learnings_api.remember_error, ErrorIn),
    whole("search_error_memory", learnings_api.search_errors, ErrorSearchIn),
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
    whole("learning_add", learnings_api.add_learning, LearningIn),
]
