"""Entry endpoints (seed 003): Add, Rename, Alias, Write, Remove, search.

Entries are addressed by name or alias in the path; names may contain '/' (daily logs), so
the path parameter takes the rest of the URL.
"""

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from pydantic import Field

from apps.core.pagination import decode_id_cursor
from apps.entries import selectors, services
from apps.entries.models import Entry
from apps.entries.schemas import (
    AliasOut,
    EntryAliasIn,
    EntryIn,
    EntryOut,
    EntryPage,
    EntryRename,
    EntrySearchOut,
    EntryWrite,
)

router = Router(tags=["entries"])


class ListQuery(Schema):
    kind: str | None = Field(None, pattern="^(note|archive)$")
    cursor: str | None = Field(None, max_length=500, description="An opaque next_cursor.")
    limit: int = Field(100, ge=1, le=500)


class SearchQuery(Schema):
    q: str = Field(..., min_length=1, max_length=4000)
    limit: int = Field(20, ge=1, le=200)


def _fresh(request: HttpRequest, name: str):
    return selectors.entry_get(agent=request.auth, ref=name)


@router.post("/entries", response={201: EntryOut})
def add_entry(request, payload: EntryIn):
    """Add: 409 if the name is already a name or an alias."""
    entry = services.entry_add(
        agent=request.auth, name=payload.name, content=payload.content, kind=payload.kind
    )
    return Status(201, _fresh(request, entry.name))


@router.get("/entries", response=EntryPage)
def list_entries(request, query: Query[ListQuery]):
    """Entries in id (insert) order, without content; `cursor` is a page's next_cursor."""
    page = selectors.entries_page(
        agent=request.auth,
        kind=query.kind,
        after_id=decode_id_cursor(query.cursor, model=Entry),
        limit=query.limit,
    )
    return {"items": page.items, "next_cursor": page.next_cursor}


@router.get("/entries/search", response=EntrySearchOut)
def search_entries(request, query: Query[SearchQuery]):
    """BM25 over name and content (aliases add no tokens); every hit has its score."""
    hits = selectors.entries_search(agent=request.auth, query=query.q, limit=query.limit)
    return {"items": [{"score": h.score, "entry": h.entry} for h in hits]}


# Before the plain {path:name} routes: Django resolves URL patterns in order.
@router.post("/entries/{path:name}/aliases", response={201: AliasOut})
def alias_entry(request, name: str, payload: EntryAliasIn):
    """Alias: bind another name; 409 if it collides with any name or alias."""
    alias = services.entry_alias(agent=request.auth, ref=name, alias=payload.alias)
    return Status(201, {"alias": alias.name, "entry": _fresh(request, alias.entry.name)})


@router.get("/entries/{path:name}", response=EntryOut)
def get_entry(request, name: str):
    return selectors.entry_get(agent=request.auth, ref=name)


@router.put("/entries/{path:name}", response=EntryOut)
def write_entry(request, name: str, payload: EntryWrite):
    """Write: replace an entry's content; the old content is kept in its change log."""
    entry = services.entry_write(agent=request.auth, ref=name, content=payload.content)
    return _fresh(request, entry.name)


@router.patch("/entries/{path:name}", response=EntryOut)
def rename_entry(request, name: str, payload: EntryRename):
    """Rename: 409 if the new name is any name or alias; an archive keeps its old name as an
    alias, so compact markers still resolve."""
    entry = services.entry_rename(agent=request.auth, ref=name, new_name=payload.name)
    return _fresh(request, entry.name)


@router.delete("/entries/{path:name}", response={204: None})
def remove_entry(request, name: str):
    """Remove: delete an entry with all its aliases; its content stays in its change log."""
    services.entry_remove(agent=request.auth, ref=name)
    return Status(204, None)
