"""/entries: named documents (notes, archives, daily logs) addressed by name or alias; names
may contain '/'. With `user`, a read finds that end user's entry before the agent's of the
same name, and a write changes the user's (the agent's with scope="agent"). A read without
`user` sees the agent's own entries alone; `all_users=True` sees every user's as well."""

from __future__ import annotations

from typing import Literal

from memoryhub_client import _call as http
from memoryhub_client._call import Bound, Call, M, given
from memoryhub_client.models import (
    Alias,
    Entry,
    EntryAliasIn,
    EntryIn,
    EntryPage,
    EntryRename,
    EntrySearchResult,
    EntryWrite,
    ListQuery,
    ReadFor,
    ScopedWrite,
    SearchQuery,
)

Scope = Literal["agent", "user"]


class Entries(Bound[M]):
    """hub.entries: add, write, read, list, search, rename, alias and remove entries."""

    @http.post("/entries")
    def add(
        self,
        name: str,
        content: str | None = None,
        *,
        kind: Literal["note", "archive"] | None = None,
        scope: Scope | None = None,
        user: str | None = None,
        index: bool | list[str] | None = None,
    ) -> Call[Entry]:
        """A new entry (Conflict when the name is already a name or alias of its owner);
        index=False leaves it out of every search; a list of JSON paths ("text", "tags[*]")
        embeds the texts at those paths of its JSON content."""
        body = EntryIn(
            name=name, **given(content=content, kind=kind, scope=scope, user=user, index=index)
        )
        return Call(Entry, body=body)

    @http.put("/entries/{name:path}")
    def write(
        self,
        name: str,
        content: str,
        *,
        scope: Scope | None = None,
        user: str | None = None,
        index: bool | list[str] | None = None,
        create: bool = False,
    ) -> Call[Entry]:
        """Replace an existing entry's content (the old content stays in its change log);
        `index` True, False or JSON paths as for `add` (None: unchanged); `create=True` adds
        the entry (a note) when it is missing, instead of NotFound."""
        body = EntryWrite(
            content=content, **given(scope=scope, user=user, index=index, create=create or None)
        )
        return Call(Entry, path={"name": name}, body=body)

    @http.get("/entries/{name:path}")
    def get(self, name: str, *, user: str | None = None, all_users: bool = False) -> Call[Entry]:
        """The entry with this name or alias, with its content."""
        query = ReadFor(**given(user=user, all_users=all_users or None))
        return Call(Entry, path={"name": name}, query=query)

    @http.listing("/entries")
    def list(
        self,
        *,
        kind: str | None = None,
        user: str | None = None,
        all_users: bool = False,
        limit: int | None = None,
        prefix: str | None = None,
        content: bool = False,
    ) -> Call[EntryPage]:
        """Every entry in insert order (only names starting with `prefix` when given), with
        its content when `content` is true; `limit` is the page size."""
        query = ListQuery(
            **given(
                kind=kind,
                user=user,
                all_users=all_users or None,
                limit=limit,
                prefix=prefix,
                content=content or None,
            )
        )
        return Call(EntryPage, query=query)

    @http.get("/entries/search")
    def search(
        self,
        query: str,
        *,
        user: str | None = None,
        all_users: bool = False,
        limit: int | None = None,
        mode: Literal["keyword", "semantic", "hybrid"] | None = None,
        prefix: str | None = None,
    ) -> Call[EntrySearchResult]:
        """The entries ranked by `mode`: keyword (BM25 over names and contents, the default),
        semantic (cosine to their vectors) or hybrid (as memory.search); only names starting
        with `prefix` when given. Every hit has its score."""
        params = SearchQuery(
            q=query,
            **given(
                user=user,
                all_users=all_users or None,
                limit=limit,
                mode=mode,
                prefix=prefix,
            ),
        )
        return Call(EntrySearchResult, query=params)

    @http.patch("/entries/{name:path}")
    def rename(
        self, name: str, new_name: str, *, scope: Scope | None = None, user: str | None = None
    ) -> Call[Entry]:
        """Rename (Conflict when `new_name` is taken); an archive keeps its old name as an
        alias."""
        body = EntryRename(name=new_name, **given(scope=scope, user=user))
        return Call(Entry, path={"name": name}, body=body)

    @http.post("/entries/{name:path}/aliases")
    def alias(
        self, name: str, alias: str, *, scope: Scope | None = None, user: str | None = None
    ) -> Call[Alias]:
        """Bind another name to the entry (Conflict when it is taken)."""
        body = EntryAliasIn(alias=alias, **given(scope=scope, user=user))
        return Call(Alias, path={"name": name}, body=body)

    @http.delete("/entries/{name:path}")
    def delete(
        self, name: str, *, scope: Scope | None = None, user: str | None = None
    ) -> Call[None]:
        """Remove the entry with its aliases (its content stays in its change log)."""
        return Call(None, path={"name": name}, query=ScopedWrite(**given(scope=scope, user=user)))
