"""/workspace: the workspace folder (entries as files, with the generated HISTORY files) as
an archive, out and in."""

from django.http import HttpResponse
from ninja import Query, Status

from apps.agents.schemas import ForUser
from apps.api.registry import Router, access
from apps.api.request import AuthedHttpRequest, AuthedRequest
from apps.memory import services as memory
from apps.memory.schemas import ImportOut, ImportQuery
from apps.people.selectors import read_audience

router = Router(tags=["memory"])


@router.get("/workspace/export")
def export_workspace(request: AuthedRequest, query: Query[ForUser]) -> HttpResponse:
    """The workspace folder (entries as files, with the generated HISTORY files) as a
    deterministic .tar.gz. With `user`: that user's memory alone (their entries, HISTORY,
    learnings and facts), for a data-access request."""
    owner = read_audience(user=query.user, where="query").user
    user = owner or None  # the agent's own memory ("") or one user's
    data = memory.workspace_archive(agent=request.auth, user=user)
    response = HttpResponse(data, content_type="application/gzip")
    name = request.auth.slug if user is None else f"{request.auth.slug}-user"
    response["Content-Disposition"] = f'attachment; filename="{name}-workspace.tar.gz"'
    return response


def _content_length(request: AuthedHttpRequest) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None


@router.post("/workspace/import", response={201: ImportOut})
@access(agent_level=True)
def import_workspace(request: AuthedHttpRequest, query: Query[ImportQuery]) -> Status[dict]:
    """Load an exported archive (the raw request body); 409 on existing names unless force.
    History and learnings files become rows again (one already present is not doubled).
    413 past an import limit (the import_max_* settings), 422 for a malformed archive."""
    # Streamed from the request (never request.body): the limits apply as it is read.
    loaded = memory.workspace_load(
        agent=request.auth, data=request, force=query.force, declared_size=_content_length(request)
    )
    result = loaded.entries
    return Status(
        201,
        {
            "created": result.created,
            "overwritten": result.overwritten,
            "names": result.names,
            "history_entries": loaded.history_entries,
            "learnings": loaded.learnings,
        },
    )
