"""Entries (seed 003): entry_add, entry_rename, entry_alias, entry_write, entry_remove,
entry_search. `name` is the entry's name or alias, as in the API's path."""

from ninja import Schema
from pydantic import Field

from apps.entries import api as entries_api
from apps.entries.schemas import EntryAliasIn, EntryIn, EntryRename, EntryWrite
from apps.mcp.tools.base import Tool

NAME = Field(..., description="The entry's name or one of its aliases.")


class EntryRef(Schema):
    name: str = NAME


class RenameIn(EntryRef):
    new_name: str = Field(..., description="The new name (EntryRename.name).")


class AliasIn(EntryAliasIn):
    name: str = NAME


class WriteIn(EntryWrite):
    name: str = NAME


TOOLS = [
    Tool(
        name="entry_add",
        endpoint=entries_api.add_entry,
        params=EntryIn,
        call=lambda request, args: entries_api.add_entry(request, payload=args),
    ),
    Tool(
        name="entry_rename",
        endpoint=entries_api.rename_entry,
        params=RenameIn,
        call=lambda request, args: entries_api.rename_entry(
            request, name=args.name, payload=EntryRename(name=args.new_name)
        ),
    ),
    Tool(
        name="entry_alias",
        endpoint=entries_api.alias_entry,
        params=AliasIn,
        call=lambda request, args: entries_api.alias_entry(
            request, name=args.name, payload=EntryAliasIn(alias=args.alias)
        ),
    ),
    Tool(
        name="entry_write",
        endpoint=entries_api.write_entry,
        params=WriteIn,
        call=lambda request, args: entries_api.write_entry(
            request, name=args.name, payload=EntryWrite(content=args.content)
        ),
    ),
    Tool(
        name="entry_remove",
        endpoint=entries_api.remove_entry,
        params=EntryRef,
        call=lambda request, args: entries_api.remove_entry(request, name=args.name),
        description="Remove: delete an entry with all its aliases; its content stays in its "
        "change log. The result is {} (the API answers 204 with no body).",
    ),
    Tool(
        name="entry_search",
        endpoint=entries_api.search_entries,
        params=entries_api.SearchQuery,
        call=lambda request, args: entries_api.search_entries(request, query=args),
    ),
]
