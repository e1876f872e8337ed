"""OpenAI Agents SDK sessions on memoryhub: `MemoryHubSession(session_id=...)`.

Install with the `agents` extra, then `Runner.run(agent, input, session=MemoryHubSession(
session_id="chat-1"))`. Every item the SDK stores is a memoryhub message of the session whose
key is `session_id`, shaped so memoryhub's own views (window, context, search) read it:

    {"role": "user"|"assistant"|"system", ...}  -> that role's message, its text as content
    {"role": "developer", ...}                  -> a system message
    {"type": "function_call", ...}              -> an assistant message with one OpenAI tool
                                                   call (consecutive calls of one add_items
                                                   share one message, as parallel calls do)
    {"type": "function_call_output", ...}       -> a tool message (tool_call_id; tool_name
                                                   when its call came in the same add_items)

Whatever a message's fields do not hold (item ids, status, content parts beside the text,
non-text outputs) is kept under the message's metadata key "openai_agents", so every item
reads back exactly as it was added. Other item types (reasoning, hosted tool calls, ...)
have no memoryhub counterpart: each is an assistant message with empty content, the item
kept whole in that metadata.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from agents.memory import Session, SessionSettings
from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client._adapters import Clients, SessionRef
from memoryhub_client.errors import NotFound

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["MemoryHubSession", "items_to_messages", "message_to_items"]

# The message metadata key holding what the message's fields do not.
METADATA_KEY = "openai_agents"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_TEXT_PARTS = ("input_text", "output_text")


class MemoryHubSession:
    """The items of memoryhub session `session_id` (its key, or its id). The session is
    created on the first add (for `user`); reading one that does not exist gives no items.

    `user`: the end user the conversation is with. Their session holds the items, and what
    memoryhub derives from them is theirs: no other user's read finds it, and
    `DELETE /users/{user}` erases it. A key names one user's session: a session naming
    another user for it is refused (Conflict) on add.

    `clear_session()` is a memoryhub session reset: its messages are consolidated into the
    agent's memory, what that did not cover is archived, then they are deleted. `pop_item()`
    removes the latest message; memoryhub refuses (Conflict) when its lifecycle has already
    folded that message into a summary, compaction or consolidation.

    `client` may be an AsyncMemoryHub, or a MemoryHub (its calls then run in a thread).
    `session_settings` (SessionSettings, or a dict of its fields) gives `get_items` its
    default `limit`; a dict is coerced as the SDK's own sessions do, unknown keys refused.

    It implements the SDK's `Session` protocol structurally, as the SDK asks of third-party
    sessions (its SessionABC is for the SDK's own).
    """

    session_id: str
    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        *,
        client: AsyncMemoryHub | MemoryHub | None = None,
        user: str | None = None,
        title: str | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        self.session_id = session_id
        # As the SDK's own sessions: a dict becomes SessionSettings, an unknown key is refused.
        self.session_settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self._session = SessionRef(session_id, user=user, title=title)
        self._clients = Clients(client)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items, oldest first; with `limit`, the latest `limit` of them."""
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and limit <= 0:
            return []
        try:
            if limit is None:
                messages = await self._clients.run(lambda hub: hub.messages.list(self.session_id))
            else:
                messages = await self._latest(limit)
        except NotFound:
            return []
        items = [item for m in messages for item in message_to_items(m)]
        return cast("list[TResponseInputItem]", items if limit is None else items[-limit:])

    async def _latest(self, limit: int) -> list[Any]:
        """The newest messages holding at least `limit` items, oldest first."""

        def enough(found: list) -> bool:
            return sum(len(message_to_items(m)) for m in found) >= limit

        # Every message holds at least one item: `limit` messages are always enough.
        page = min(limit, 100)
        newest = await self._clients.run(
            lambda hub: hub.messages.list(self.session_id, order="desc", limit=page), stop=enough
        )
        return list(reversed(newest))

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append `items` in one atomic request (all are stored, or none)."""
        if items:
            await self._append(items_to_messages(items))

    async def _append(self, batch: list[dict[str, Any]]) -> None:
        await self._session.aensure(self._clients)
        try:
            await self._clients.run(lambda hub: hub.messages.append(self.session_id, batch))
        except NotFound:  # the session was removed since: create it again, once
            self._session.forget()
            await self._session.aensure(self._clients)
            await self._clients.run(lambda hub: hub.messages.append(self.session_id, batch))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the latest item; None when the session has none."""
        try:
            message = await self._clients.run(lambda hub: hub.messages.pop(self.session_id))
        except NotFound:
            return None
        items = message_to_items(message)
        if len(items) > 1:
            # A message of parallel calls holds several items: the others go back, in the
            # popped message's place.
            rest = items_to_messages(items[:-1])
            for m in rest:
                m["created_at"] = message.created_at.isoformat()
            await self._append(rest)
        return cast("TResponseInputItem", items[-1])

    async def clear_session(self) -> None:
        """Reset the memoryhub session (consolidate, archive, delete its messages)."""
        with contextlib.suppress(NotFound):
            await self._clients.run(lambda hub: hub.sessions.reset(self.session_id))


# --- items -> memoryhub messages -----------------------------------------------------------


def items_to_messages(items: Sequence[Any]) -> list[dict[str, Any]]:
    """The memoryhub messages (an append's body) that read back as `items`."""
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # call_id -> function name, for the outputs' tool_name
    skeletons: list[list[dict[str, Any]]] = []
    for raw in items:
        item = _plain(raw)
        kind = item.get("type")
        if kind == "function_call":
            names[item.get("call_id", "")] = item.get("name", "")
            call, skeleton = _function_call(item)
            if out and skeletons[-1][-1].get("type") == "function_call":
                out[-1]["tool_calls"].append(call)
                skeletons[-1].append(skeleton)
                continue
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})
            skeletons.append([skeleton])
            continue
        if kind == "function_call_output":
            message, skeleton = _function_output(item, names)
        elif "role" in item and kind in (None, "message"):
            message, skeleton = _message(item)
        else:  # no memoryhub counterpart: kept whole
            message, skeleton = {"role": "assistant", "content": ""}, {"*": item}
        out.append(message)
        skeletons.append([skeleton])
    for message, kept in zip(out, skeletons, strict=True):
        if any(_meaningful(s) for s in kept):
            message["metadata"] = {METADATA_KEY: {"items": kept}}
    return out


def _plain(item: Any) -> dict[str, Any]:
    """An item as a JSON-ready dict (the SDK also hands over its pydantic models)."""
    if hasattr(item, "model_dump"):
        return cast(dict, item.model_dump(mode="json", exclude_unset=True))
    if not isinstance(item, dict):
        raise TypeError(f"an item must be a dict, not {type(item).__name__}")
    return copy.deepcopy(item)


def _meaningful(skeleton: dict[str, Any]) -> bool:
    """Whether a skeleton holds anything the message's fields do not."""
    return bool({k: v for k, v in skeleton.items() if k != "type"}) or skeleton.get("type") not in (
        None,
        "function_call",
        "function_call_output",
    )


def _function_call(item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    call = {
        "id": item.get("call_id"),
        "type": "function",
        "function": {"name": item.get("name", ""), "arguments": item.get("arguments", "")},
    }
    skeleton = {k: v for k, v in item.items() if k not in ("call_id", "name", "arguments")}
    return call, skeleton


def _function_output(
    item: dict[str, Any], names: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    call_id = item.get("call_id")
    output = item.get("output")
    skeleton = {k: v for k, v in item.items() if k != "call_id"}
    if isinstance(output, str):
        text = output
        del skeleton["output"]
    else:  # content parts (text, image, file): their text is the content, the parts kept
        text = _parts_text(output if isinstance(output, list) else [])
    message: dict[str, Any] = {"role": "tool", "content": text, "tool_call_id": call_id}
    if call_id in names:
        message["tool_name"] = names[call_id]
    return message, skeleton


def _message(item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    role = _ROLES.get(item["role"], "user")
    skeleton = {k: v for k, v in item.items() if k != "role" or v != role}
    content = item.get("content")
    if isinstance(content, str):
        text = content
        del skeleton["content"]
    elif isinstance(content, list):
        text = _parts_text(content)
        texts = [p for p in content if isinstance(p, dict) and "text" in p]
        if len(texts) == 1 and texts[0].get("type") in _TEXT_PARTS:
            # The one text part's text is the message's content: kept once, not twice.
            skeleton["content"] = [
                {k: v for k, v in p.items() if k != "text"} if p is texts[0] else p for p in content
            ]
    else:
        text = ""
    return {"role": role, "content": text}, skeleton


def _parts_text(parts: list[Any]) -> str:
    texts = [p.get("text") or p.get("refusal") or "" for p in parts if isinstance(p, dict)]
    return "\n".join(t for t in texts if t)


# --- memoryhub messages -> items -----------------------------------------------------------


def message_to_items(message: Any) -> list[dict[str, Any]]:
    """The items a memoryhub message (a `memoryhub_client` Message) holds, in order."""
    kept = (message.metadata or {}).get(METADATA_KEY)
    skeletons = kept.get("items") if isinstance(kept, dict) else None
    calls = message.tool_calls or []
    if message.role == "assistant" and calls:
        if not isinstance(skeletons, list) or len(skeletons) != len(calls):
            skeletons = [{} for _ in calls]
        return [_call_item(c, s) for c, s in zip(calls, skeletons, strict=True)]
    skeleton = skeletons[0] if isinstance(skeletons, list) and skeletons else {}
    if "*" in skeleton:
        return [copy.deepcopy(skeleton["*"])]
    if message.role == "tool":
        item = {"type": "function_call_output", "call_id": message.tool_call_id, **skeleton}
        item.setdefault("output", message.content)
        return [item]
    item = {"role": message.role, **skeleton}
    content = item.get("content")
    if content is None:
        item["content"] = message.content
    elif isinstance(content, list):
        item["content"] = [
            {**p, "text": message.content}
            if isinstance(p, dict) and p.get("type") in _TEXT_PARTS and "text" not in p
            else p
            for p in content
        ]
    return [item]


def _call_item(call: dict[str, Any], skeleton: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    return {
        "type": "function_call",
        **skeleton,
        "call_id": call.get("id"),
        "name": function.get("name", ""),
        "arguments": function.get("arguments", ""),
    }


if TYPE_CHECKING:  # the type checker holds MemoryHubSession to the SDK's Session protocol
    _checked: Session = MemoryHubSession(session_id="checked")
