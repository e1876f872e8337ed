"""A LangGraph store on memoryhub entries: `MemoryHubStore()`.

Install with the `langgraph` extra, then `graph.compile(store=MemoryHubStore())`. An item is
one entry: namespace ("users", "alice", "prefs") and key "food" are the entry
`users/alice/prefs/food.json` (under `prefix/` when the store has a prefix), its content the
value as JSON (names.py says why ".json" and what is escaped, reversibly).

Whose an item is (issue 39): every op acts for one end user of the agent, or for none:
the store's `user` when it has one, else the user its namespace rule names (by default
("users", "{user}"): the namespace ("users", "ana", ...) is ana's), else none. A put writes
the entry as that user's (the agent's for none), so `DELETE /users/ana` erases it with her
and no other user's read finds it; a get, search or listing reads as that user: their items
and the agent's, the user's own first where both have one name (for none: the agent's items
alone, so a search over ("users",) or the whole store finds no user's item). A listing's user
comes from its prefix (list_namespaces(prefix=("users", "ana"))). With a key bound to one
user, give the store that user (the key writes as them: a put stored as another owner than
its op's is a ValueError, since the store would not read it back). Items a 1.x store put in
("users", X, ...) are agent entries: the store still reads them in X's namespace (as the
agent's), but they are not X's until moved (`adopt_user_items()`).

What maps and what does not:
- get, put, delete, list_namespaces: exactly, within one memoryhub agent (the key's).
- search with `query`, and the store built with `index={"dims": 384}` (LangGraph's
  IndexConfig without `embed`; `fields`, or langgraph-checkpoint-sqlite's `text_fields`,
  name the JSON paths indexed, "$" the whole value): the server embeds the items with its
  own model (`dims` must be its 384, else ValueError) and ranks them as /memory/search
  does (GET /entries/search, mode hybrid: BM25 and cosine fused), within the namespace
  prefix's folder, for the op's user; `filter` applied, then offset/limit, `score` the
  server's. Each put sends its own `index=[fields]`, else the store's `fields`, as the
  entry's `index`, so the item's vector is of the texts at those paths. Items put with
  index=False are not returned by a query search (they are listed without one).
- search with `query`, and `index={"dims": ..., "embed": ...}` (the caller's embedder):
  semantic search ranked in the client (vectors.py): every item under the prefix the op's
  user sees, `filter` applied, best cosine similarity of its indexed texts first (`score`),
  items put with index=False last with score None, then offset/limit.
- search with `query`, no `index`: memoryhub's keyword search over entries (BM25 on name and
  content; no meaning-only match) within the namespace prefix's folder, `filter` applied,
  then offset/limit. `score` is the BM25 score. The server returns at most the best 200
  entries of the folder, so a filter that keeps few of many hits can come back short.
- search without `query`: the items under the prefix, most recently updated first,
  `filter` applied ($eq, $ne, $gt, $gte, $lt, $lte and nested objects; a dotted key that
  is no key of the value reads nested ones), then offset/limit. Filters run in the client:
  any JSON key is a filter key, none is refused.
- `put(..., index=False)`: the entry is written with memoryhub's `index: false`, which keeps
  it out of every memoryhub search (this store's query searches included); it is still
  listed by a search without query, and ranked last (score None) by a semantic search.
  `index=[fields]`: the keyword search indexes the whole value, as None does; a semantic
  search ranks the item by those fields (the server's index: stored with the entry; the
  caller's embedder: remembered by the store object that put it).
- Sync and async: one store has both; its sync methods block (they work inside an event
  loop, where AsyncSqliteStore's refuse with InvalidStateError).
- TTL: not supported (`supports_ttl` is False): memoryhub keeps entries until removed.
- Batches: reads see the store as it was before the batch's writes, and of several puts of
  one item the last wins, as LangGraph's own stores do. A batch with an invalid namespace is
  refused whole, before any request. Ops are separate requests: a batch is not atomic, and
  thousands of ops are thousands of requests (a client keeps at most `max_connections` in
  flight). A put is one upsert (`PUT /entries/{name}` with `create`); a search without
  query or a semantic search reads its namespace's entries with their contents in one
  request per 500 items; a get is one request.
- Names are at most 200 characters (255 bytes) in memoryhub: longer paths are refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from functools import partial
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client._adapters import Clients, read
from memoryhub_client.errors import Conflict, NotFound
from memoryhub_client.langgraph.calls import (
    check_owner,
    content_of,
    get_or_none,
    item_value,
    last_puts,
    list_entries,
    search_entries,
    sort_time,
    visible,
    within,
)
from memoryhub_client.langgraph.filters import namespace_matches, value_matches
from memoryhub_client.langgraph.names import entry_name, folder, parse_name, valid_prefix
from memoryhub_client.langgraph.users import (
    DEFAULT_RULE,
    Rule,
    compile_rule,
    concrete_prefix,
)
from memoryhub_client.langgraph.vectors import ServerIndex, VectorIndex, ranked, server_side

# A listing a batch reads once: (user, name folder, with content).
Listing = tuple[str | None, str, bool]

__all__ = ["DEFAULT_RULE", "MemoryHubStore", "entry_name", "parse_name"]


class MemoryHubStore(BaseStore):
    """LangGraph's BaseStore over memoryhub entries (see the module docstring for what maps).

    `client`: a MemoryHub, an AsyncMemoryHub (async use only) or None (from the environment).
    `prefix`: an entry folder for every item, e.g. "langgraph", to keep the store's entries
    apart from the agent's own documents (memory/..., MEMORY.md).
    `user`: the end user every op acts for (a namespace naming another user is a
    ValueError); None: the namespace rule decides.
    `user_from_namespace`: the namespace rule (memoryhub_client.langgraph.users): a pattern
    such as ("users", "{user}") (the default) or ("memories", "{user}"), a function
    `user_of(namespace) -> str | None`, or None (no namespace names a user).
    """

    supports_ttl = False

    def __init__(
        self,
        *,
        client: MemoryHub | AsyncMemoryHub | None = None,
        prefix: str = "",
        user: str | None = None,
        user_from_namespace: Rule = DEFAULT_RULE,
        index: IndexConfig | None = None,
    ) -> None:
        self.prefix = prefix.strip("/")
        if self.prefix and not valid_prefix(self.prefix):
            raise ValueError(f"invalid prefix {prefix!r}: an entry folder, as 'langgraph'")
        if user is not None and (not isinstance(user, str) or not user.strip()):
            raise ValueError("user must be a non-empty string, or None")
        self.user = user
        self._rule = compile_rule(user_from_namespace)
        self._clients = Clients(client)
        # Without `embed` the server embeds (ServerIndex); with it, the client ranks.
        self._server = ServerIndex(index) if index and server_side(index) else None
        self._index = VectorIndex(index) if index and self._server is None else None
        self.index_config = index or None
        self.embeddings = self._index.embeddings if self._index else None

    def user_of(self, namespace: tuple[str, ...]) -> str | None:
        """The end user an op on `namespace` acts for (None: the agent): the store's user,
        else the one the namespace rule names. ValueError when they differ."""
        named = self._rule(tuple(namespace)) or None
        if self.user is None:
            return named
        if named is not None and named != self.user:
            raise ValueError(
                f"namespace {tuple(namespace)!r} is {named!r}'s; this store acts for {self.user!r}"
            )
        return self.user

    def adopt_user_items(self) -> list[str]:
        """Make the agent's items in a user's namespace (what a 1.x store put there) that
        user's own, so they are erased with them and no other user's read finds them: each
        is added as the user's (theirs stays where they have one of that name) and removed
        as the agent's. Returns the entry names moved. Not atomic: run it again after a
        failure."""
        hub = self._clients.sync
        moved = []
        for summary in read(list_entries(hub, None)):
            parsed = parse_name(summary.name, prefix=self.prefix)
            if summary.user is not None or parsed is None:
                continue
            user = self._rule(parsed[0])
            if user is None or self.user not in (None, user):
                continue
            entry = hub.entries.get(summary.name)  # without a user: the agent's
            with contextlib.suppress(Conflict):
                hub.entries.add(entry.name, entry.content, index=entry.index, user=user)
            hub.entries.delete(entry.name)
            moved.append(entry.name)
        return moved

    # -- the batch: reads first, then the writes (the last put of an item wins) -------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:  # the whole batch is refused before any request
            validate_op_namespace(op)
        hub = self._clients.sync
        results: list[Result] = []
        listings: dict[Listing, list[Any]] = {}  # each listing read once per batch

        def listed(user: str | None, space: tuple[str, ...], content: bool) -> list[Any]:
            at = (user, folder(space, prefix=self.prefix), content)
            if at not in listings:
                listings[at] = self._listing(read(list_entries(hub, *at)), user)
            return listings[at]

        for op in ops:
            if isinstance(op, GetOp):
                user = self.user_of(op.namespace)
                found = get_or_none(hub, self._name(op.namespace, op.key), user)
                results.append(self._get(found, op, user))
            elif isinstance(op, SearchOp):
                user = self.user_of(op.namespace_prefix)
                if op.query and self._index is not None:
                    listing = listed(user, op.namespace_prefix, True)
                    results.append(self._semantic(listing, op, user))
                elif op.query:
                    hits = search_entries(hub, query=op.query, user=user, **self._searching(op))
                    results.append(self._ranked(hits.items, op, user))
                else:
                    results.append(self._listed(listed(user, op.namespace_prefix, True), op, user))
            elif isinstance(op, ListNamespacesOp):
                user = self._listing_user(op)
                results.append(self._namespaces(listed(user, (), False), op))
            elif isinstance(op, PutOp):
                results.append(None)
            else:
                raise ValueError(f"unknown operation {op!r}")
        for put, owner in self._owned_puts(ops):
            self._put(hub, put, owner)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:  # the whole batch is refused before any request
            validate_op_namespace(op)
        run = self._clients.run
        results: list[Result] = []
        listings: dict[Listing, list[Any]] = {}

        async def listed(user: str | None, space: tuple[str, ...], content: bool) -> list[Any]:
            name_start = folder(space, prefix=self.prefix)
            at = (user, name_start, content)
            if at not in listings:
                call = partial(list_entries, user=user, folder=name_start, content=content)
                summaries = await run(call)
                listings[at] = self._listing(summaries, user)
            return listings[at]

        for op in ops:
            if isinstance(op, GetOp):
                user = self.user_of(op.namespace)
                found = await self._aget_entry(self._name(op.namespace, op.key), user)
                results.append(self._get(found, op, user))
            elif isinstance(op, SearchOp):
                user = self.user_of(op.namespace_prefix)
                if op.query and self._index is not None:
                    listing = await listed(user, op.namespace_prefix, True)
                    results.append(await self._asemantic(listing, op, user))
                elif op.query:
                    call = partial(search_entries, query=op.query, user=user, **self._searching(op))
                    results.append(self._ranked((await run(call)).items, op, user))
                else:
                    listing = await listed(user, op.namespace_prefix, True)
                    results.append(self._listed(listing, op, user))
            elif isinstance(op, ListNamespacesOp):
                user = self._listing_user(op)
                results.append(self._namespaces(await listed(user, (), False), op))
            elif isinstance(op, PutOp):
                results.append(None)
            else:
                raise ValueError(f"unknown operation {op!r}")
        for put, owner in self._owned_puts(ops):
            await self._aput(put, owner)
        return results

    def _searching(self, op: SearchOp) -> dict[str, str]:
        """How the server searches for a query: within the namespace's folder; hybrid (its
        own vectors) when the store has a server-side index, else keyword."""
        within_folder = {"prefix": folder(tuple(op.namespace_prefix), prefix=self.prefix)}
        return {**within_folder, "mode": "hybrid"} if self._server else within_folder

    def _listing_user(self, op: ListNamespacesOp) -> str | None:
        """A listing's user: the one its prefix condition names (see users.concrete_prefix)."""
        return self.user_of(concrete_prefix(op.match_conditions or ()))

    def _owned_puts(self, ops: list[Op]) -> list[tuple[PutOp, str | None]]:
        """The batch's puts with the user each writes for, every one checked before the
        first write."""
        return [(put, self.user_of(put.namespace)) for put in last_puts(ops)]

    # -- get ----------------------------------------------------------------------------------

    def _name(self, namespace: tuple[str, ...], key: str) -> str:
        return entry_name(tuple(namespace), str(key), prefix=self.prefix)

    def _get(self, entry: Any, op: GetOp, user: str | None) -> Item | None:
        if entry is None or entry.name != self._name(op.namespace, op.key):
            return None  # missing, or only an alias of that name
        value = item_value(entry.content)
        if value is None or not visible(entry, user):
            return None
        return Item(
            value=value,
            key=op.key,
            namespace=tuple(op.namespace),
            created_at=entry.created_at,
            updated_at=entry.updated_at,
        )

    # -- put and delete -----------------------------------------------------------------------

    def _put(self, hub: MemoryHub, op: PutOp, owner: str | None) -> None:
        name = self._name(op.namespace, op.key)
        if self._index is not None:
            self._index.remember_put(name, op.index)
        if op.value is None:
            with contextlib.suppress(NotFound):
                hub.entries.delete(name, user=owner)
            return
        content, index = content_of(op, self._server)
        # One upsert under the server's lock: two puts of one new item never race.
        written = hub.entries.write(name, content, index=index, user=owner, create=True)
        check_owner(written, owner)

    async def _aput(self, op: PutOp, owner: str | None) -> None:
        run = self._clients.run
        name = self._name(op.namespace, op.key)
        if self._index is not None:
            self._index.remember_put(name, op.index)
        if op.value is None:
            with contextlib.suppress(NotFound):
                await run(lambda hub: hub.entries.delete(name, user=owner))
            return
        content, index = content_of(op, self._server)
        written = await run(
            lambda hub: hub.entries.write(name, content, index=index, user=owner, create=True)
        )
        check_owner(written, owner)

    # -- search and list_namespaces -----------------------------------------------------------

    def _listing(self, summaries: Iterable[Any], user: str | None) -> list[Any]:
        """The store's entries `user` sees (with content when the listing asked for it), one
        per name (theirs before the agent's), most recently updated first."""
        found: dict[str, Any] = {}
        for s in summaries:
            if parse_name(s.name, prefix=self.prefix) is None or not visible(s, user):
                continue
            if s.name not in found or s.user is not None:
                found[s.name] = s
        return sorted(found.values(), key=lambda s: sort_time(s.updated_at), reverse=True)

    async def _aget_entry(self, name: str, user: str | None) -> Any:
        try:
            return await self._clients.run(lambda hub: hub.entries.get(name, user=user))
        except NotFound:
            return None

    def _ranked(self, hits: list[Any], op: SearchOp, user: str | None) -> list[SearchItem]:
        """Keyword hits `user` sees within the prefix (theirs before the agent's of one
        name), filtered, then the op's page of them."""
        seen = [h for h in hits if getattr(h.entry, "index", True) and visible(h.entry, user)]
        owned = {h.entry.name for h in seen if h.entry.user is not None}
        items = []
        for hit in seen:
            entry = hit.entry
            if entry.user is None and entry.name in owned:
                continue
            item = self._search_item(entry, op, user, score=hit.score)
            if item is not None:
                items.append(item)
        return items[op.offset : op.offset + op.limit]

    # -- semantic search (index=...: vectors.py) -----------------------------------------------

    def _candidates(
        self, listing: list[Any], op: SearchOp, user: str | None
    ) -> list[tuple[SearchItem, list[str]]]:
        """The items a semantic search ranks (under the prefix, filtered), each with its
        indexed texts (none for an entry written with index false)."""
        assert self._index is not None
        out = []
        for entry in listing:
            item = self._search_item(entry, op, user)
            if item is not None:
                texts = self._index.texts(entry.name, item.value) if entry.index else []
                out.append((item, texts))
        return out

    def _scored(
        self,
        candidates: list[tuple[SearchItem, list[str]]],
        query_vector: list[float],
        op: SearchOp,
    ) -> list[SearchItem]:
        assert self._index is not None
        scored = [(self._index.score(query_vector, texts), item) for item, texts in candidates]
        page = ranked(scored)[op.offset : op.offset + op.limit]
        return [
            SearchItem(
                namespace=item.namespace,
                key=item.key,
                value=item.value,
                created_at=item.created_at,
                updated_at=item.updated_at,
                score=score,
            )
            for score, item in page
        ]

    def _semantic(self, listing: list[Any], op: SearchOp, user: str | None) -> list[SearchItem]:
        assert self._index is not None
        assert op.query
        candidates = self._candidates(listing, op, user)
        missing = self._index.missing([t for _, texts in candidates for t in texts])
        if missing:
            self._index.keep(missing, self._index.embeddings.embed_documents(missing))
        return self._scored(candidates, self._index.embeddings.embed_query(op.query), op)

    async def _asemantic(
        self, listing: list[Any], op: SearchOp, user: str | None
    ) -> list[SearchItem]:
        assert self._index is not None
        assert op.query
        candidates = self._candidates(listing, op, user)
        missing = self._index.missing([t for _, texts in candidates for t in texts])
        if missing:
            self._index.keep(missing, await self._index.embeddings.aembed_documents(missing))
        query_vector = await self._index.embeddings.aembed_query(op.query)
        return self._scored(candidates, query_vector, op)

    def _listed(self, listing: list[Any], op: SearchOp, user: str | None) -> list[SearchItem]:
        """A search without query: the items under the prefix, newest first, filtered, then
        the op's page of them."""
        items = [item for entry in listing if (item := self._search_item(entry, op, user))]
        return items[op.offset : op.offset + op.limit]

    def _search_item(
        self, entry: Any, op: SearchOp, user: str | None, *, score: float | None = None
    ) -> Any:
        parsed = parse_name(entry.name, prefix=self.prefix)
        if parsed is None or not within(parsed[0], op.namespace_prefix):
            return None
        value = item_value(entry.content)
        if value is None or not visible(entry, user):
            return None
        if op.filter and not value_matches(value, op.filter):
            return None
        return SearchItem(
            namespace=parsed[0],
            key=parsed[1],
            value=value,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
            score=score,
        )

    def _namespaces(self, listing: list[Any], op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = {parsed[0] for s in listing if (parsed := parse_name(s.name, prefix=self.prefix))}
        if op.match_conditions:
            spaces = {
                ns for ns in spaces if all(namespace_matches(c, ns) for c in op.match_conditions)
            }
        if op.max_depth is not None:
            spaces = {ns[: op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]
