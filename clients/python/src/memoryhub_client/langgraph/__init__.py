"""A LangGraph store on memoryhub entries: `MemoryHubStore()`.

Install with the `langgraph` extra, then `graph.compile(store=MemoryHubStore())`. An item is
one entry: namespace ("users", "alice", "prefs") and key "food" are the entry
`users/alice/prefs/food.json` (under `prefix/` when the store has a prefix), its content the
value as JSON (names.py says why ".json" and what is escaped, reversibly).

What maps and what does not:
- get, put, delete, list_namespaces: exactly, within one memoryhub agent (the key's).
- search with `query`: memoryhub's keyword search over entries (BM25 on name and content;
  memoryhub does not embed entries, so no meaning-only match); hits are kept within the
  namespace prefix, `filter` applied, then offset/limit. `score` is the BM25 score. The
  keyword search looks at the agent's best 200 entries, so a prefix of few hits among many
  matching entries elsewhere can come back short.
- search without `query`: the items under the prefix, most recently updated first,
  `filter` applied ($eq, $ne, $gt, $gte, $lt, $lte and nested objects), then offset/limit.
- `put(..., index=False)`: the entry is written with memoryhub's `index: false`, which keeps
  it out of every memoryhub search (this store's query searches included); it is still
  listed by a search without query. `index=[fields]` indexes the whole value, as None does.
- TTL: not supported (`supports_ttl` is False): memoryhub keeps entries until removed.
- Batches: reads see the store as it was before the batch's writes, and of several puts of
  one item the last wins, as LangGraph's own stores do. Ops are separate requests: a batch
  is not atomic.
- Names are at most 200 characters (255 bytes) in memoryhub: longer paths are refused.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from datetime import datetime
from functools import partial
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client._adapters import Clients, read
from memoryhub_client.errors import Conflict, NotFound
from memoryhub_client.langgraph.filters import namespace_matches, value_matches
from memoryhub_client.langgraph.names import entry_name, parse_name, valid_prefix

__all__ = ["MemoryHubStore", "entry_name", "parse_name"]

# The keyword search's largest page (GET /entries/search's limit).
SEARCH_WINDOW = 200
LIST_PAGE = 100


def _value(content: str) -> dict[str, Any] | None:
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class MemoryHubStore(BaseStore):
    """LangGraph's BaseStore over memoryhub entries (see the module docstring for what maps).

    `client`: a MemoryHub, an AsyncMemoryHub (async use only) or None (from the environment).
    `prefix`: an entry folder for every item, e.g. "langgraph", to keep the store's entries
    apart from the agent's own documents (memory/..., MEMORY.md).
    """

    supports_ttl = False

    def __init__(
        self, *, client: MemoryHub | AsyncMemoryHub | None = None, prefix: str = ""
    ) -> None:
        self.prefix = prefix.strip("/")
        if self.prefix and not valid_prefix(self.prefix):
            raise ValueError(f"invalid prefix {prefix!r}: an entry folder, as 'langgraph'")
        self._clients = Clients(client)

    # -- the batch: reads first, then the writes (the last put of an item wins) -------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        hub = self._clients.sync
        results: list[Result] = []
        listing: list[Any] | None = None
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(self._fetch(hub, op.namespace, op.key), op))
            elif isinstance(op, SearchOp):
                if op.query:
                    results.append(self._ranked(_search(hub, query=op.query).items, op))
                else:
                    listing = listing if listing is not None else self._listing(hub)
                    names = self._page_names(listing, op)
                    results.append(self._listed(names, self._contents(hub, names), op))
            elif isinstance(op, ListNamespacesOp):
                listing = listing if listing is not None else self._listing(hub)
                results.append(self._namespaces(listing, op))
            elif isinstance(op, PutOp):
                results.append(None)
            else:
                raise ValueError(f"unknown operation {op!r}")
        for put in _last_puts(ops):
            self._put(hub, put)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        run = self._clients.run
        results: list[Result] = []
        listing: list[Any] | None = None
        for op in ops:
            if isinstance(op, GetOp):
                found = await self._aget_entry(self._name(op.namespace, op.key))
                results.append(self._get(found, op))
            elif isinstance(op, SearchOp):
                if op.query:
                    page = await run(partial(_search, query=op.query))
                    results.append(self._ranked(page.items, op))
                else:
                    listing = listing if listing is not None else await self._alisting()
                    names = self._page_names(listing, op)
                    results.append(self._listed(names, await self._acontents(names), op))
            elif isinstance(op, ListNamespacesOp):
                listing = listing if listing is not None else await self._alisting()
                results.append(self._namespaces(listing, op))
            elif isinstance(op, PutOp):
                results.append(None)
            else:
                raise ValueError(f"unknown operation {op!r}")
        for put in _last_puts(ops):
            await self._aput(put)
        return results

    # -- get ----------------------------------------------------------------------------------

    def _name(self, namespace: tuple[str, ...], key: str) -> str:
        return entry_name(tuple(namespace), str(key), prefix=self.prefix)

    def _fetch(self, hub: MemoryHub, namespace: tuple[str, ...], key: str) -> Any:
        return _get_or_none(hub, self._name(namespace, key))

    def _get(self, entry: Any, op: GetOp) -> Item | None:
        if entry is None or entry.name != self._name(op.namespace, op.key):
            return None  # missing, or only an alias of that name
        value = _value(entry.content)
        if value is None:
            return None
        return Item(
            value=value,
            key=op.key,
            namespace=tuple(op.namespace),
            created_at=entry.created_at,
            updated_at=entry.updated_at,
        )

    # -- put and delete -----------------------------------------------------------------------

    def _put(self, hub: MemoryHub, op: PutOp) -> None:
        name = self._name(op.namespace, op.key)
        if op.value is None:
            with contextlib.suppress(NotFound):
                hub.entries.delete(name)
            return
        content, index = _content(op)
        try:
            hub.entries.write(name, content, index=index)
        except NotFound:
            try:
                hub.entries.add(name, content, index=index)
            except Conflict:  # added meanwhile by another writer: this put replaces it
                hub.entries.write(name, content, index=index)

    async def _aput(self, op: PutOp) -> None:
        run = self._clients.run
        name = self._name(op.namespace, op.key)
        if op.value is None:
            with contextlib.suppress(NotFound):
                await run(lambda hub: hub.entries.delete(name))
            return
        content, index = _content(op)
        try:
            await run(lambda hub: hub.entries.write(name, content, index=index))
        except NotFound:
            try:
                await run(lambda hub: hub.entries.add(name, content, index=index))
            except Conflict:
                await run(lambda hub: hub.entries.write(name, content, index=index))

    # -- search and list_namespaces -----------------------------------------------------------

    def _listing(self, hub: MemoryHub) -> list[Any]:
        """Every entry summary of the store (no content), most recently updated first."""
        return _store_entries(read(hub.entries.list(limit=LIST_PAGE)), self.prefix)

    async def _alisting(self) -> list[Any]:
        found = await self._clients.run(lambda hub: hub.entries.list(limit=LIST_PAGE))
        return _store_entries(found, self.prefix)

    def _contents(self, hub: MemoryHub, names: list[str]) -> dict[str, Any]:
        return {n: e for n in names if (e := _get_or_none(hub, n)) is not None}

    async def _acontents(self, names: list[str]) -> dict[str, Any]:
        out = {}
        for name in names:
            entry = await self._aget_entry(name)
            if entry is not None:
                out[name] = entry
        return out

    async def _aget_entry(self, name: str) -> Any:
        try:
            return await self._clients.run(lambda hub: hub.entries.get(name))
        except NotFound:
            return None

    def _ranked(self, hits: list[Any], op: SearchOp) -> list[SearchItem]:
        """Keyword hits within the prefix, filtered, then the op's page of them."""
        items = []
        for hit in hits:
            entry = hit.entry
            if not getattr(entry, "index", True):
                continue
            item = self._search_item(entry, op, score=hit.score)
            if item is not None:
                items.append(item)
        return items[op.offset : op.offset + op.limit]

    def _page_names(self, listing: list[Any], op: SearchOp) -> list[str]:
        """The entries a search without query reads: under the prefix, newest first; only
        the op's page of them when there is no filter to apply first."""
        names = [s.name for s in _under(listing, op.namespace_prefix, self.prefix)]
        return names if op.filter else names[op.offset : op.offset + op.limit]

    def _listed(self, names: list[str], found: dict[str, Any], op: SearchOp) -> list[SearchItem]:
        items = [
            item
            for name in names
            if name in found and (item := self._search_item(found[name], op)) is not None
        ]
        return items[op.offset : op.offset + op.limit] if op.filter else items

    def _search_item(self, entry: Any, op: SearchOp, *, score: float | None = None) -> Any:
        parsed = parse_name(entry.name, prefix=self.prefix)
        if parsed is None or not _within(parsed[0], op.namespace_prefix):
            return None
        value = _value(entry.content)
        if value is None or (op.filter and not value_matches(value, op.filter)):
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


# --- helpers ----------------------------------------------------------------------------------


def _search(hub: Any, *, query: str) -> Any:
    return hub.entries.search(query, limit=SEARCH_WINDOW)


def _get_or_none(hub: Any, name: str) -> Any:
    try:
        return hub.entries.get(name)
    except NotFound:
        return None


def _content(op: PutOp) -> tuple[str, bool]:
    value = op.value
    assert value is not None  # a delete is handled before
    return json.dumps(dict(value), ensure_ascii=False), op.index is not False


def _last_puts(ops: list[Op]) -> list[PutOp]:
    """The batch's puts, one per item (the last), in the order the items first appear."""
    last: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for op in ops:
        if isinstance(op, PutOp):
            last[(tuple(op.namespace), op.key)] = op
    return list(last.values())


def _store_entries(summaries: Iterable[Any], prefix: str) -> list[Any]:
    found = [s for s in summaries if parse_name(s.name, prefix=prefix) is not None]
    return sorted(found, key=lambda s: _sort_time(s.updated_at), reverse=True)


def _sort_time(at: datetime) -> float:
    return at.timestamp()


def _under(listing: list[Any], namespace_prefix: tuple[str, ...], prefix: str) -> list[Any]:
    out = []
    for s in listing:
        parsed = parse_name(s.name, prefix=prefix)
        if parsed is not None and _within(parsed[0], namespace_prefix):
            out.append(s)
    return out


def _within(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return tuple(namespace[: len(prefix)]) == tuple(prefix)
