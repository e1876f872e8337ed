"""A strict validator of OpenAI's chat `messages` rules, as the Chat Completions API enforces
them (it answers 400 for each of these):

- a non-empty list of objects, each with a known `role` (system, developer, user, assistant,
  tool) and only the keys that role takes;
- `content`: text, or a list of content parts of the kinds the role takes; required, except
  on an assistant message with tool_calls (then it may be null or missing);
- `name`: 1-64 characters of [A-Za-z0-9_-], on system, developer, user and assistant only;
- an assistant's `tool_calls`: a non-empty list of {"id", "type": "function", "function":
  {"name", "arguments"}}, ids unique in the message, the function name in the same alphabet,
  the arguments a string;
- a `tool` message has a `tool_call_id`, and follows (possibly after other tool messages of
  the same turn) an assistant message whose tool_calls hold that id, not answered yet;
- every call of an assistant message is answered by exactly one tool message before the next
  message that is not a tool's (or the end of the list).
"""

import re
from typing import Any

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "refusal"},
    "tool": {"role", "content", "tool_call_id"},
}
# The content part types each role accepts in a content list.
PARTS = {
    "system": {"text"},
    "developer": {"text"},
    "user": {"text", "image_url", "input_audio", "file"},
    "assistant": {"text", "refusal"},
    "tool": {"text"},
}


class InvalidChat(ValueError):
    """The messages break OpenAI's rules; `problems` says where and how."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _content_problems(i: int, role: str, message: dict) -> list[str]:
    content = message.get("content")
    if content is None:
        if role == "assistant" and message.get("tool_calls"):
            return []
        return [f"[{i}] {role}: content is required"]
    if isinstance(content, str):
        return []
    if not isinstance(content, list) or not content:
        return [f"[{i}] {role}: content must be a string or a non-empty list of parts"]
    out = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in PARTS[role]:
            out.append(f"[{i}] {role}: content part {j} of type {kind!r} is not allowed")
        elif kind in ("text", "refusal") and not isinstance(part.get(kind), str):
            out.append(f"[{i}] {role}: content part {j} needs a string {kind!r}")
    return out


def _call_problems(i: int, calls: Any) -> tuple[list[str], list[str]]:
    """The problems of a tool_calls list, and its call ids."""
    if not isinstance(calls, list) or not calls:
        return [f"[{i}] assistant: tool_calls must be a non-empty list"], []
    out, ids = [], []
    for j, call in enumerate(calls):
        where = f"[{i}] assistant: tool_calls[{j}]"
        if not isinstance(call, dict) or set(call) != {"id", "type", "function"}:
            out.append(f"{where} must have exactly id, type and function")
            continue
        function = call["function"]
        if not isinstance(call["id"], str) or not call["id"]:
            out.append(f"{where}: id must be a non-empty string")
        elif call["id"] in ids:
            out.append(f"{where}: id {call['id']!r} is repeated")
        else:
            ids.append(call["id"])
        if call["type"] != "function":
            out.append(f"{where}: type must be 'function'")
        if not isinstance(function, dict) or set(function) != {"name", "arguments"}:
            out.append(f"{where}: function must have exactly name and arguments")
            continue
        if not isinstance(function["name"], str) or not NAME.match(function["name"]):
            out.append(f"{where}: function name {function['name']!r} is not allowed")
        if not isinstance(function["arguments"], str):
            out.append(f"{where}: arguments must be a string (JSON text)")
    return out, ids


def _message_problems(i: int, message: Any) -> tuple[str | None, list[str]]:
    """The message's role (None when unusable) and its own problems."""
    if not isinstance(message, dict):
        return None, [f"[{i}] is not an object"]
    role = message.get("role")
    if role not in KEYS:
        return None, [f"[{i}] role {role!r} is not one of {sorted(KEYS)}"]
    out = [f"[{i}] {role}: unknown key {k!r}" for k in sorted(set(message) - KEYS[role])]
    out += _content_problems(i, role, message)
    name = message.get("name")
    if "name" in message and (not isinstance(name, str) or not NAME.match(name)):
        out.append(f"[{i}] {role}: name {message['name']!r} is not allowed")
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            out.append(f"[{i}] tool: tool_call_id is required")
    return role, out


def problems(messages: Any) -> list[str]:
    """Every rule `messages` breaks (empty: OpenAI accepts them)."""
    if not isinstance(messages, list) or not messages:
        return ["messages must be a non-empty list"]
    out: list[str] = []
    pending: dict[str, int] = {}  # the open turn's unanswered call ids -> its index
    turn: int | None = None  # the index of the assistant message whose results may follow
    for i, message in enumerate(messages):
        role, found = _message_problems(i, message)
        out += found
        if role == "tool":
            call_id = message.get("tool_call_id")
            if turn is None:
                out.append(f"[{i}] tool: no assistant tool call precedes it")
            elif call_id not in pending:
                out.append(f"[{i}] tool: {call_id!r} is not an unanswered call of message [{turn}]")
            else:
                del pending[call_id]
            continue
        out += [f"[{at}] assistant: call {c!r} has no tool message" for c, at in pending.items()]
        pending, turn = {}, None
        if role == "assistant" and "tool_calls" in message:
            found_calls, ids = _call_problems(i, message["tool_calls"])
            out += found_calls
            pending, turn = dict.fromkeys(ids, i), i
    out += [f"[{at}] assistant: call {c!r} has no tool message" for c, at in pending.items()]
    return out


def validate(messages: Any) -> None:
    """InvalidChat unless OpenAI's chat API would accept `messages`."""
    found = problems(messages)
    if found:
        raise InvalidChat(found)


def tool_call(ident: str, name: str, arguments: Any) -> dict:
    """One entry of an assistant's OpenAI `tool_calls`: `ident` calling function `name`."""
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}
