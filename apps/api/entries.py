"""/entries: add, rename, alias, write, remove, search.

Entries are addressed by name or alias in the path; names may contain '/' (daily logs), so
the path parameter takes the rest of the URL. Names are per owner (issue 26): with `user`, a
read finds the user's entry before the agent's of the same name, and a write changes the
user's (the agent's with scope "agent"); without `user` or `all_users` a read finds the
agent's own entries alone (issue 39).
"""

from ninja import Query, Status

from apps.agents.schemas import ReadFor, ScopedWrite
from apps.agents.users import Audience
from apps.api.registry import PathRest, Router
from apps.api.request import AuthedRequest
from apps.core.errors import NotFound
from apps.core.pagination import Page, decode_id_cursor
from apps.entries import schemas, selectors, services
from apps.entries.models import Entry
from apps.people.selectors import read_audience

router = Router(tags=["entries"])


def _owner(call: ScopedWrite) -> str:
    return Audience(call.user).owner(call.scope)


def _fresh(request: AuthedRequest, entry: Entry) -> Entry:
    """The entry as written, read again with its aliases; when a concurrent request has
    removed it since this write committed, the write's own row (the write did happen)."""
    try:
        return selectors.entry_get(
            agent=request.auth, ref=entry.name, audience=Audience(entry.user)
        )
    except NotFound:
        return entry


@router.post("/entries", response={201: schemas.EntryOut})
def add_entry(request: AuthedRequest, payload: schemas.EntryIn) -> Status[Entry]:
    """Add: 409 if the name is already a name or an alias of the same owner."""
    entry = services.entry_add(
        agent=request.auth,
        name=payload.name,
        content=payload.content,
        kind=payload.kind,
        owner=_owner(payload),
        index=payload.index,
    )
    return Status(201, _fresh(request, entry))


@router.get("/entries", response=schemas.EntryPage)
def list_entries(request: AuthedRequest, query: Query[schemas.ListQuery]) -> Page[Entry]:
    """Entries in id (insert) order, with content when `content` is true; `prefix` keeps
    the names starting with it; `cursor` is a page's next_cursor."""
    return selectors.entries_page(
        agent=request.auth,
        kind=query.kind,
        prefix=query.prefix,
        with_content=query.content,
        limit=query.limit,
        after_id=decode_id_cursor(query.cursor, model=Entry),
        audience=read_audience(user=query.user, all_users=query.all_users, where="query"),
    )


@router.get("/entries/search", response=schemas.EntrySearchOut)
def search_entries(request: AuthedRequest, query: Query[schemas.SearchQuery]) -> dict:
    """The entries written with `index` true (or fields), named `prefix`... when given:
    `mode` keyword (BM25 over name and content; aliases add no tokens), semantic (cosine)
    or hybrid (as /memory/search ranks); every hit has its score."""
    seen = read_audience(user=query.user, all_users=query.all_users, where="query")
    found = selectors.entries_search(
        agent=request.auth,
        query=query.q,
        limit=query.limit,
        audience=seen,
        mode=query.mode,
        prefix=query.prefix,
    )
    items = [{"score": h.score, "entry": h.entry} for h in found.items]
    return {"items": items, "degraded": found.degraded}


# Before the plain {name} routes: Django resolves URL patterns in order.
@router.post("/entries/{name}/aliases", response={201: schemas.AliasOut})
def alias_entry(
    request: AuthedRequest, name: PathRest, payload: schemas.EntryAliasIn
) -> Status[dict]:
    """Alias: bind another name; 409 if it collides with any name or alias."""
    alias = services.entry_alias(
        agent=request.auth, ref=name, alias=payload.alias, owner=_owner(payload)
    )
    return Status(201, {"alias": alias.name, "entry": _fresh(request, alias.entry)})


@router.get("/entries/{name}", response=schemas.EntryOut)
def get_entry(request: AuthedRequest, name: PathRest, query: Query[ReadFor]) -> Entry:
    """With `user`, the user's entry of that name before the agent's; without `user` or
    `all_users`, the agent's own."""
    seen = read_audience(user=query.user, all_users=query.all_users, where="query")
    return selectors.entry_get(agent=request.auth, ref=name, audience=seen)


@router.put("/entries/{name}", response=schemas.EntryOut)
def write_entry(request: AuthedRequest, name: PathRest, payload: schemas.EntryWrite) -> Entry:
    """Write: replace an entry's content; the old content is kept in its change log.
    `index` (when given) puts the entry in every search, or leaves it out; `create` adds a
    missing entry (a note) instead of a 404."""
    entry = services.entry_write(
        agent=request.auth,
        ref=name,
        content=payload.content,
        owner=_owner(payload),
        index=payload.index,
        create=payload.create,
    )
    return _fresh(request, entry)


@router.patch("/entries/{name}", response=schemas.EntryOut)
def rename_entry(request: AuthedRequest, name: PathRest, payload: schemas.EntryRename) -> Entry:
    """Rename: 409 if the new name is any name or alias; an archive keeps its old name as an
    alias, so compact markers still resolve."""
    entry = services.entry_rename(
        agent=request.auth, ref=name, new_name=payload.name, owner=_owner(payload)
    )
    return _fresh(request, entry)


@router.delete("/entries/{name}", response={204: None})
def remove_entry(request: AuthedRequest, name: PathRest, query: Query[ScopedWrite]) -> Status[None]:
    """Remove: delete an entry with all its aliases; its content stays in its change log."""
    services.entry_remove(agent=request.auth, ref=name, owner=_owner(query))
    return Status(204, None)
