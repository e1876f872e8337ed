"""What the agents' API and the MCP tools read from a caller."""

from ninja import Schema
from pydantic import ConfigDict


class Input(Schema):
    """A request body, a part of one, a query or a tool's arguments: a key it does not
    declare is a 422 naming it, so a misspelt option (`limit` for `k`) is never silently
    the default. A query string's unknown parameters never reach it (ninja reads only the
    declared ones): there, as on the web, they are ignored."""

    model_config = ConfigDict(extra="forbid")
