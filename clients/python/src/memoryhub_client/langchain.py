"""LangChain chat history on memoryhub: `MemoryHubChatMessageHistory(session_id=...)`.

Install with the `langchain` extra. Each LangChain message is one memoryhub message of the
session whose key is `session_id`:

    HumanMessage -> user      AIMessage -> assistant (tool_calls as OpenAI tool calls)
    SystemMessage -> system   ToolMessage -> tool (tool_call_id; name -> tool_name;
                                             status "error" -> is_error)

`name` travels as memoryhub's `name` (a ToolMessage's as `tool_name`). What memoryhub has no
field for (a message's LangChain id, additional_kwargs, response_metadata, usage_metadata, a
ToolMessage's artifact, list content, a ChatMessage's own role) is kept under the message's
metadata key "langchain", so every message reads back as it was added: a message added
without an id reads back without one, as LangChain's own histories give it back. memoryhub's
own message ids are not LangChain ids (`MemoryHub.messages.list` lists them). A
FunctionMessage (a legacy tool result, naming no call) answers a call recorded for it just
before it, as memoryhub requires of a tool message; that call reads back as nothing.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import invalid_tool_call, tool_call

from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client._adapters import Clients, SessionRef
from memoryhub_client.errors import NotFound

__all__ = ["MemoryHubChatMessageHistory", "from_memoryhub", "to_memoryhub"]

# The message metadata key holding what memoryhub has no field for.
METADATA_KEY = "langchain"
# Its "type" on the call recorded for a FunctionMessage.
RECORDED_CALL = "recorded_call"
_CHAT_ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
}


class MemoryHubChatMessageHistory(BaseChatMessageHistory):
    """The messages of memoryhub session `session_id` (its key, or its id), as LangChain
    messages. The session is created on the first add (for `user`, with `title`); reading a
    session that does not exist yet gives no messages.

    `user`: the end user the conversation is with. Their session holds the messages, and
    what memoryhub derives from them (facts, summaries, archives) is theirs: no other user's
    read finds it, and `DELETE /users/{user}` erases it. A key names one user's session: a
    history naming another user for it is refused (Conflict) on add.

    `clear()` is a memoryhub session reset: memoryhub consolidates the messages into the
    agent's long-term memory, keeps what consolidation did not cover in an Archive entry,
    then deletes them; the session and its rolling summary stay.
    """

    def __init__(
        self,
        session_id: str,
        *,
        client: MemoryHub | AsyncMemoryHub | None = None,
        user: str | None = None,
        title: str | None = None,
    ) -> None:
        self.session_id = session_id
        self._session = SessionRef(session_id, user=user, title=title)
        self._clients = Clients(client)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """Every message of the session, oldest first."""
        try:
            return _read(self._clients.sync.messages.list(self.session_id))
        except NotFound:
            return []

    async def aget_messages(self) -> list[BaseMessage]:
        try:
            found = await self._clients.run(lambda hub: hub.messages.list(self.session_id))
        except NotFound:
            return []
        return _read(found)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append `messages` in one atomic request (all are stored, or none)."""
        if not messages:
            return
        batch = _batch(messages)
        hub = self._clients.sync
        self._session.ensure(hub)
        try:
            hub.messages.append(self.session_id, batch)
        except NotFound:  # the session was removed since: create it again, once
            self._session.forget()
            self._session.ensure(hub)
            hub.messages.append(self.session_id, batch)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        if not messages:
            return
        batch = _batch(messages)
        await self._session.aensure(self._clients)
        try:
            await self._clients.run(lambda hub: hub.messages.append(self.session_id, batch))
        except NotFound:
            self._session.forget()
            await self._session.aensure(self._clients)
            await self._clients.run(lambda hub: hub.messages.append(self.session_id, batch))

    def clear(self) -> None:
        """Reset the memoryhub session (consolidate, archive, delete its messages)."""
        with contextlib.suppress(NotFound):
            self._clients.sync.sessions.reset(self.session_id)

    async def aclear(self) -> None:
        with contextlib.suppress(NotFound):
            await self._clients.run(lambda hub: hub.sessions.reset(self.session_id))


# --- LangChain message -> memoryhub message ----------------------------------------------


def _batch(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The append's body: each message's item, a FunctionMessage's after the call recorded
    for it (memoryhub stores a tool result only as the answer to a call)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        item = to_memoryhub(message)
        if isinstance(message, FunctionMessage):
            ident = f"call_{uuid.uuid4().hex[:24]}"
            call = _openai_call(ident, message.name or "function", "{}")
            out.append({"role": "assistant", "content": None, "tool_calls": [call],
                        "metadata": {METADATA_KEY: {"type": RECORDED_CALL}}})  # fmt: skip
            item["tool_call_id"] = ident
        out.append(item)
    return out


def to_memoryhub(message: BaseMessage) -> dict[str, Any]:
    """The memoryhub message (an append's body item) that reads back as `message`."""
    extra: dict[str, Any] = {}
    out: dict[str, Any] = {"content": _text(message.content, extra)}
    if isinstance(message, AIMessage):  # AIMessageChunk too
        out["role"] = "assistant"
        calls = [
            _openai_call(c["id"], c["name"], json.dumps(c["args"])) for c in message.tool_calls
        ]
        calls += [_openai_call(c["id"], c["name"], c["args"]) for c in message.invalid_tool_calls]
        if calls:
            out["tool_calls"] = calls
        if message.usage_metadata:
            extra["usage_metadata"] = dict(message.usage_metadata)
    elif isinstance(message, ToolMessage):
        out["role"] = "tool"
        out["tool_call_id"] = message.tool_call_id
        if message.name:
            out["tool_name"] = message.name
        if message.status == "error":
            out["is_error"] = True
        if message.artifact is not None:
            extra["artifact"] = message.artifact
    elif isinstance(message, HumanMessage):
        out["role"] = "user"
    elif isinstance(message, SystemMessage):
        out["role"] = "system"
    elif isinstance(message, FunctionMessage):  # the legacy form of a tool result
        out["role"] = "tool"
        out["tool_name"] = message.name
        extra["type"] = "function"
    elif isinstance(message, ChatMessage):
        out["role"] = _CHAT_ROLES.get(message.role, "user")
        extra["type"] = "chat"
        extra["role"] = message.role
    else:
        raise TypeError(f"cannot store a {type(message).__name__} in memoryhub")
    if message.name and out["role"] != "tool":
        out["name"] = message.name
    if message.id is not None:
        extra["id"] = message.id
    if message.additional_kwargs:
        extra["additional_kwargs"] = message.additional_kwargs
    if message.response_metadata:
        extra["response_metadata"] = message.response_metadata
    if extra:
        out["metadata"] = {METADATA_KEY: extra}
    return out


def _text(content: str | list, extra: dict[str, Any]) -> str:
    """The message's text; list content (blocks) is also kept whole in `extra`."""
    if isinstance(content, str):
        return content
    extra["content"] = content
    parts = [b if isinstance(b, str) else b.get("text", "") for b in content]
    return "".join(p for p in parts if isinstance(p, str))


def _openai_call(call_id: str | None, name: str | None, arguments: str | None) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name or "", "arguments": arguments or ""},
    }


# --- memoryhub message -> LangChain message ----------------------------------------------


def _read(messages: Any) -> list[BaseMessage]:
    """The LangChain messages of memoryhub's, without the calls recorded for FunctionMessages."""
    out = []
    for message in messages:
        extra = (message.metadata or {}).get(METADATA_KEY)
        if not (isinstance(extra, dict) and extra.get("type") == RECORDED_CALL):
            out.append(from_memoryhub(message))
    return out


def from_memoryhub(message: Any) -> BaseMessage:
    """A memoryhub message (a `memoryhub_client` Message) as the LangChain message it was."""
    extra = (message.metadata or {}).get(METADATA_KEY)
    extra = extra if isinstance(extra, dict) else {}
    common: dict[str, Any] = {
        "content": extra.get("content", message.content),
        "id": extra.get("id"),
        "additional_kwargs": extra.get("additional_kwargs", {}),
        "response_metadata": extra.get("response_metadata", {}),
    }
    kind = extra.get("type")
    if kind == "chat":
        return ChatMessage(role=extra.get("role", message.role), name=_name(message), **common)
    if message.role == "assistant":
        calls, invalid = _langchain_calls(message.tool_calls or [])
        usage = extra.get("usage_metadata")
        return AIMessage(
            name=_name(message),
            tool_calls=calls,
            invalid_tool_calls=invalid,
            usage_metadata=usage,
            **common,
        )
    if message.role == "tool":
        tool_name = message.tool_name or message.name or None
        if kind == "function":
            return FunctionMessage(name=tool_name or "", **common)
        return ToolMessage(
            tool_call_id=message.tool_call_id or "",
            name=tool_name,
            status="error" if message.is_error else "success",
            artifact=extra.get("artifact"),
            **common,
        )
    if message.role == "system":
        return SystemMessage(name=_name(message), **common)
    return HumanMessage(name=_name(message), **common)


def _name(message: Any) -> str | None:
    return message.name or None


def _langchain_calls(calls: list[dict[str, Any]]) -> tuple[list, list]:
    """OpenAI tool calls as LangChain's: arguments that parse to an object are a tool call,
    anything else an invalid tool call carrying the raw arguments."""
    valid, invalid = [], []
    for call in calls:
        function = call.get("function") or {}
        name, raw, call_id = function.get("name"), function.get("arguments"), call.get("id")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            args = None
        if isinstance(args, dict):
            valid.append(tool_call(name=name or "", args=args, id=call_id))
        else:
            invalid.append(invalid_tool_call(name=name, args=raw, id=call_id, error=None))
    return valid, invalid
