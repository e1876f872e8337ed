"""memoryhub messages as an OpenAI chat `messages` list, in one call. Pure and standard
library only: it reads dicts as the API returns them, or any objects with those attributes
(the client's models, a stored Message).

    from memoryhub_client.chat import to_openai_messages

    context = ...  # the body of POST /api/v1/context
    completion = openai.chat.completions.create(
        model="gpt-4o-mini", messages=[*to_openai_messages(context), next_user_message]
    )

How /context is replayed: everything that is not a message of this session goes into one
system message first: the `system` parts in their order (documents, the rolling summary,
the recap, learnings, error hints), each under its plain `title` ("Agent memory", not
"MEMORY.md"; its name when it has none), then the facts, then the `memory` windows (other
conversations, quoted as text under their header lines: they are evidence, not turns of
this conversation, so they are never replayed as chat turns). Then the session's
`messages`, oldest first, each as its role's chat message. A /window answer is replayed the
same way, its `summary` and `recap` in the system message.

The list always follows OpenAI's tool rules, even for a history stored before memoryhub
enforced them (issue 41): each tool result comes right after the call it answers (the newest
call with its id before it); a call with no result gets one saying that no result was
recorded; a result with no call before it gets the call recorded for it, as memoryhub
records one for a failure appended without a call (an assistant message calling its
`tool_name`, or "unknown_tool", with no arguments), so the result is kept, in its place.
"""

import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

__all__ = ["NO_RESULT", "openai_tool_call", "system_text", "to_openai_messages"]

ROLES = ("system", "user", "assistant", "tool")
# OpenAI rejects a message `name` outside this alphabet, or longer than 64 characters.
_NAME_REJECTED = re.compile(r"[^A-Za-z0-9_-]")
NAME_MAX = 64
# The result of a call that has none in the history.
NO_RESULT = "No result was recorded for this tool call."
UNKNOWN_TOOL = "unknown_tool"
HEADINGS = {
    "summary": "Summary of the conversation so far",
    "recap": "Recap of the messages before these",
}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _is_answer(value: Any) -> bool:
    """A whole /context or /window answer rather than a list of messages."""
    if isinstance(value, Mapping):
        return "messages" in value
    # A pydantic model iterates over its fields: tell it by its attribute, not by iteration.
    return not isinstance(value, (list, tuple)) and hasattr(value, "messages")


def openai_tool_call(call: Any) -> dict[str, Any]:
    """One stored tool call in OpenAI's shape: {"id", "type": "function", "function":
    {"name", "arguments": <JSON text>}}. Accepts that shape (arguments as text or as a JSON
    value) and the flat {"id" or "call_id", "name", "arguments" or "args"} of other SDKs."""
    function = _get(call, "function")
    ident = _get(call, "id") or _get(call, "call_id")
    name = _get(function, "name") if function is not None else None
    name = name or _get(call, "name")
    arguments = _get(function, "arguments") if function is not None else None
    if arguments is None:
        arguments = _get(call, "arguments", _get(call, "args"))
    if not ident or not name:
        raise ValueError(f"a tool call needs an id and a function name: {call!r}")
    name = _name(name) or UNKNOWN_TOOL  # OpenAI's alphabet for function names too
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": str(ident),
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _name(value: Any) -> str:
    """A participant name OpenAI accepts: other characters become "_", cut to 64."""
    return _NAME_REJECTED.sub("_", str(value or ""))[:NAME_MAX]


def _tool_calls(message: Any) -> list[Any]:
    calls = _get(message, "tool_calls")
    if calls is None:
        calls = _get(message, "tool_calls_json")  # a stored Message
    return list(calls or [])


def _chat_message(message: Any) -> dict[str, Any]:
    role = _get(message, "role")
    content = _get(message, "content")
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    if role == "tool":
        out: dict[str, Any] = {"role": "tool", "content": content or ""}
        call_id = _get(message, "tool_call_id")
        if call_id:
            out["tool_call_id"] = str(call_id)
        return out  # OpenAI's tool messages carry no name (tool_name is memoryhub's)
    out = {"role": role, "content": content or ""}
    if role == "assistant":
        calls: dict[str, dict[str, Any]] = {}
        for call in _tool_calls(message):
            found = openai_tool_call(call)
            calls.setdefault(found["id"], found)  # an id twice in a message: its first call
        if calls:
            out["content"] = content or None  # memoryhub stores a null content as ""
            out["tool_calls"] = list(calls.values())
    name = _name(_get(message, "name"))
    if name:
        out["name"] = name
    return out


class _Turn:
    """An assistant message with tool calls, and the results found for them."""

    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message
        self.results: dict[str, dict[str, Any]] = {}

    def ids(self) -> list[str]:
        return [c["id"] for c in self.message.get("tool_calls", [])]

    def chat(self) -> list[dict[str, Any]]:
        """The call, then a result for each of its calls, in the calls' order."""
        missing = {"role": "tool", "content": NO_RESULT}
        return [
            self.message,
            *(self.results.get(i, {**missing, "tool_call_id": i}) for i in self.ids()),
        ]


def _recorded_call(message: Any, result: dict[str, Any], at: int) -> _Turn:
    """The call a result without one answers: as memoryhub records it for a failure."""
    ident = result.get("tool_call_id") or f"call_unrecorded_{_get(message, 'id') or at}"
    name = _name(_get(message, "tool_name")) or UNKNOWN_TOOL
    function = {"name": name, "arguments": "{}"}
    call: dict[str, Any] = {"id": str(ident), "type": "function", "function": function}
    turn = _Turn({"role": "assistant", "content": None, "tool_calls": [call]})
    turn.results[call["id"]] = {**result, "tool_call_id": call["id"]}
    return turn


def _chat_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """The messages as chat messages, each tool result right after its call (the newest call
    with its id before it, while unanswered), each call answered."""
    items: list[_Turn | dict[str, Any]] = []
    latest: dict[str, _Turn] = {}  # call id -> the newest turn making that call
    for at, message in enumerate(messages):
        chat = _chat_message(message)
        if chat["role"] == "tool":
            turn = latest.get(chat.get("tool_call_id", ""))
            if turn is not None and chat["tool_call_id"] not in turn.results:
                turn.results[chat["tool_call_id"]] = chat
                continue
            turn = _recorded_call(message, chat, at)
            items.append(turn)  # in its place: the result is not moved, its call is added
            continue
        if "tool_calls" not in chat:
            items.append(chat)
            continue
        turn = _Turn(chat)
        latest.update(dict.fromkeys(turn.ids(), turn))
        items.append(turn)
    return [m for item in items for m in (item.chat() if isinstance(item, _Turn) else [item])]


def _clock(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%H:%M")
    text = str(value or "")
    return text[11:16] if len(text) >= 16 else ""


def _quoted_line(message: Any) -> str:
    """A message of another conversation as a line: `[HH:MM] role (name): content`, its
    tool calls named with their arguments."""
    role = _get(message, "role") or "?"
    who = _get(message, "tool_name") if role == "tool" else _get(message, "name")
    text = _get(message, "content") or ""
    calls = ", ".join(
        f"{c['function']['name']}({c['function']['arguments']})"
        for c in (openai_tool_call(c) for c in _tool_calls(message))
    )
    if calls:
        text = f"{text} [called {calls}]" if text else f"[called {calls}]"
    clock = _clock(_get(message, "created_at"))
    prefix = f"[{clock}] " if clock else ""
    return f"{prefix}{role}{f' ({who})' if who else ''}: {text}"


def _section(title: str, body: str) -> str:
    return f"## {title}\n{body.strip()}"


def system_text(system: Any = None, memory: Iterable[Any] | None = None) -> str:
    """The system message's text: `system` as given when it is text, else /context's
    `system` (its parts in order under their names, then its facts), then the `memory`
    windows, each under its header line. "" when there is nothing."""
    sections: list[str] = []
    if isinstance(system, str):
        sections.append(system.strip())
    elif system is not None:
        for part in _get(system, "parts") or []:
            kind, name = _get(part, "kind"), _get(part, "name")
            title = _get(part, "title") or HEADINGS.get(kind, name or kind)
            sections.append(_section(title, _get(part, "content") or ""))
        facts = [
            f"- [{_get(f, 'category')}] {_get(f, 'key')}: {_get(f, 'value')}"
            for f in _get(system, "facts") or []
        ]
        if facts:
            sections.append(_section("Facts", "\n".join(facts)))
    windows = [
        f"### {_get(w, 'header')}\n" + "\n".join(_quoted_line(m) for m in _get(w, "messages") or [])
        for w in memory or []
    ]
    if windows:
        sections.append(_section("From earlier conversations", "\n\n".join(windows)))
    return "\n\n".join(s for s in sections if s)


def _window_system(answer: Any) -> str:
    """A /window answer's summary and recap, as the system text."""
    parts = [
        {"kind": kind, "content": _get(answer, kind)}
        for kind in ("summary", "recap")
        if _get(answer, kind)
    ]
    return system_text({"parts": parts})


def to_openai_messages(
    messages: Any, system: Any = None, *, memory: Iterable[Any] | None = None
) -> list[dict[str, Any]]:
    """OpenAI chat `messages` for memoryhub messages, oldest first.

    `messages`: a list of messages (/context's or /window's `messages`, a /messages page's
    `items`), or a whole /context or /window answer, whose system part, facts and memory
    windows (or summary and recap) are used unless `system` or `memory` is given. `system`:
    text, or /context's `system` object; with `memory`, one system message comes first.
    Roles map one to one; an assistant's tool calls take OpenAI's shape (null content when
    it has none); a tool message keeps its `tool_call_id` and follows its call, and the tool
    rules hold (the module's docstring); `name` is kept on the roles OpenAI allows it on, in
    its alphabet. ValueError for an unknown role or a tool call without an id or a name.
    """
    if _is_answer(messages):
        answer = messages
        messages = _get(answer, "messages") or []
        if system is None:
            found = _get(answer, "system")
            system = found if found is not None else _window_system(answer)
        if memory is None:
            memory = _get(answer, "memory")
    text = system_text(system, memory)
    head = [{"role": "system", "content": text}] if text else []
    return head + _chat_messages(messages)
