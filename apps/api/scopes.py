"""A key's scope (issue 39), enforced in one place before any endpoint parses its input: the
JSON API's bearer auth (memoryhub/api.py) and the MCP tools (apps/mcp/tools/base.py) both
hand each call here, as sent.

A read-only key may not write (apps/api/registry.py classifies each operation). A key bound
to one end user acts as that user: naming another (a `user` in the query, the body or the
path, a session of someone else, `all_users`) is a 403, on every operation; naming no one
is naming the bound user (`with_user`). It may not write the agent's own memory either.
docs/memory.md, "Keys and their scopes", has the table."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from apps.agents.keyscope import KeyScope
from apps.agents.models import Agent
from apps.agents.users import AGENT, EVERYONE
from apps.api.registry import Access, Endpoint, access_of
from apps.conversations.selectors import session_get
from apps.core.errors import Forbidden, NotFound
from apps.facts.selectors import fact_get
from apps.learnings.selectors import learning_get

USER = "user"
ALL_USERS = "all_users"
SESSION = "session_id"


@dataclass(frozen=True)
class Call:
    """One call's input as sent, before parsing: its path parameters, its query (first
    value of each), the top level of its JSON body ({} for none or a non-object), and the
    names its query and body declare."""

    endpoint: Endpoint
    path: Mapping[str, str | int]  # as Django's path converters give them
    query: Mapping[str, str]
    body: Mapping[str, object]
    query_declares: frozenset[str]
    body_declares: frozenset[str]

    @property
    def access(self) -> Access:
        return access_of(self.endpoint)


def _named_users(call: Call) -> list[object]:
    """Every user the call names: the query's, the body's and the path's `user`."""
    return [place[USER] for place in (call.query, call.body, call.path) if USER in place]


def _same_user(value: object, bound: str) -> bool:
    # clean_user strips what it is given; a non-string is no user at all.
    return isinstance(value, str) and value.strip() == bound


def _check_session(agent: Agent, ref: object, bound: str) -> None:
    """Forbidden when `ref` names a session of the agent that is not the bound user's (one
    without a user included); an unknown ref is left to the endpoint's 404."""
    if not isinstance(ref, str) or not ref:
        return
    try:
        session = session_get(agent=agent, ref=ref)
    except NotFound:
        return
    if session.user != bound:
        whose = "another user" if session.user else "no user (the agent's own)"
        raise Forbidden(f"this key acts for user '{bound}' only; session '{ref}' is of {whose}")


def _session_refs(call: Call) -> list[object]:
    """The sessions the call names: `session_id` anywhere, and the access's session field."""
    refs = [place.get(SESSION) for place in (call.path, call.query, call.body)]
    if field := call.access.session_field:
        refs.append(call.body.get(field))
    return [ref for ref in refs if ref is not None]


# A write's row named by the path: its owner must be the bound user (not the agent's own).
_ROW_OWNERS: dict[str, Callable[[Agent, int], str]] = {
    "fact_id": lambda agent, pk: fact_get(agent=agent, fact_id=pk, audience=EVERYONE).user,
    "learning_id": lambda agent, pk: (
        learning_get(agent=agent, learning_id=pk, audience=EVERYONE).user
    ),
}


def _check_rows(agent: Agent, call: Call, bound: str) -> None:
    for param, owner_of in _ROW_OWNERS.items():
        if param not in call.path:
            continue
        try:
            owner = owner_of(agent, int(call.path[param]))
        except (NotFound, ValueError):
            continue  # the endpoint answers its 404
        if owner == AGENT:
            raise Forbidden(
                f"this key acts for user '{bound}' only; it may not change the agent's own memory"
            )
        if owner != bound:
            raise Forbidden(f"this key acts for user '{bound}' only; this is another user's")


def _check_agent_write(call: Call, bound: str) -> None:
    """A write that would land in the agent's own memory: `scope: "agent"`, or an operation
    that takes neither a user nor a required session, called without its session."""
    scopes = [place.get("scope") for place in (call.query, call.body)]
    if "agent" in scopes:
        raise Forbidden(
            f"this key acts for user '{bound}' only; it may not write the agent's "
            'own memory (scope "agent")'
        )
    declares = call.query_declares | call.body_declares
    if USER not in declares and SESSION in declares and not _session_refs(call):
        raise Forbidden(
            f"this key acts for user '{bound}' only: name one of its sessions "
            "(session_id), or this would be the agent's own"
        )


def _check_user(agent: Agent, call: Call, bound: str) -> None:
    if call.access.agent_level:
        raise Forbidden(f"this key acts for user '{bound}' only; this operation is the agent's")
    if ALL_USERS in call.query or ALL_USERS in call.body:
        raise Forbidden(f"this key acts for user '{bound}' only; all_users is not for it")
    for named in _named_users(call):
        if not _same_user(named, bound):
            raise Forbidden(f"this key acts for user '{bound}' only; it may not name another")
    for ref in _session_refs(call):
        _check_session(agent, ref, bound)
    if call.access.write:
        _check_agent_write(call, bound)
        _check_rows(agent, call, bound)


def enforce(*, agent: Agent, scope: KeyScope, call: Call) -> None:
    """Forbidden (403) when `scope` does not allow `call`; nothing for an unscoped key."""
    if scope.read_only and call.access.write:
        raise Forbidden("this key is read-only; this operation writes")
    if scope.user is not None:
        _check_user(agent, call, scope.user)


V = TypeVar("V")


def with_user(
    scope: KeyScope, values: Mapping[str, V], declares: frozenset[str]
) -> dict[str, V | str]:
    """`values` with the bound user added as `user` where it is declared and not given: a
    user-bound key naming no one names its user."""
    found: dict[str, V | str] = dict(values)
    if scope.user is not None and USER in declares and USER not in found:
        found[USER] = scope.user
    return found
