"""Entries (seed 003): entry_add, entry_rename, entry_alias, entry_write, entry_remove,
entry_search. `name` is the entry's name or alias, as in the API's path."""

from collections.abc import Callable
from typing import Any

from ninja import Schema
from pydantic import Field

from apps.agents.schemas import ScopedWrite
from apps.api import entries as entries_api
from apps.entries.schemas import (
    EntryAliasIn,
    EntryIn,
    EntryRename,
    EntryWrite,
    SearchQuery,
)
from apps.mcp.tools.base import Tool, part, whole

NAME = Field(..., description="The entry's name or one of its aliases.")


class EntryRef(Schema):
    name: str = NAME


class ScopedRef(EntryRef, ScopedWrite):
    """An entry of the agent's, or (with `user`) of one of its users."""


class RenameIn(ScopedRef):
    new_name: str = Field(..., description="The new name (EntryRename.name).")


class AliasIn(EntryAliasIn):
    name: str = NAME


class WriteIn(EntryWrite):
    name: str = NAME


def _named(name: str, endpoint: Callable[..., Any], params: type[Schema], body: Callable) -> Tool:
    """A tool over /entries/{name}...: `name` goes in the path, body(args) is the body."""
    return Tool(
        name=name,
        endpoint=endpoint,
        params=params,
        call=lambda request, args: endpoint(request, name=args.name, payload=body(args)),
    )


TOOLS = [
    whole("entry_add", entries_api.add_entry, EntryIn),
    _named(
        "entry_rename",
        entries_api.rename_entry,
        RenameIn,
        lambda args: EntryRename(name=args.new_name, user=args.user, scope=args.scope),
    ),
    _named("entry_alias", entries_api.alias_entry, AliasIn, lambda args: part(args, EntryAliasIn)),
    _named("entry_write", entries_api.write_entry, WriteIn, lambda args: part(args, EntryWrite)),
    Tool(
        name="entry_remove",
        endpoint=entries_api.remove_entry,
        params=ScopedRef,
        call=lambda request, args: entries_api.remove_entry(
            request, name=args.name, query=part(args, ScopedWrite)
        ),
        description="Remove: delete an entry with all its aliases; its content stays in its "
        "change log. The result is {} (the API answers 204 with no body).",
    ),
    whole("entry_search", entries_api.search_entries, SearchQuery, into="query"),
]
