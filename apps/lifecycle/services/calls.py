"""How each lifecycle call is asked (issue 23): the JSON Schema of its answer, its output
bound (max_tokens), its time limit, and a prompt cut so that prompt plus output fit the
model's context (MEMORYHUB_LLM_CONTEXT_TOKENS).

Prompt sizes are estimates (apps.providers.llm.budget keeps a margin for the difference).
"""

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from apps.agents.config import AgentConfig
from apps.conversations.models import Message
from apps.lifecycle.models import Trigger
from apps.lifecycle.services.leases import lease_ttl
from apps.lifecycle.services.prompts import format_message
from apps.lifecycle.services.step_parts import remaining
from apps.providers.llm import ChatMessage
from apps.providers.llm.budget import (
    background_timeout,
    context_tokens,
    messages_tokens,
    prompt_budget,
)
from apps.providers.token_counts import count_tokens, count_tokens_batch


def _object(properties: dict, required: Sequence[str]) -> dict:
    return {"type": "object", "properties": properties, "required": list(required)}


_STRING = {"type": "string"}
SUMMARY_SCHEMA = _object({"summary": _STRING}, ["summary"])
ARCHIVE_SCHEMA = SUMMARY_SCHEMA
# Seed 004 applies each field on its own: only history_entry is required, so a model that
# has nothing to change in MEMORY.md may leave memory_update out.
CONSOLIDATION_SCHEMA = _object(
    {
        "history_entry": _STRING,
        "memory_update": _STRING,
        "corrections": {"type": "array", "items": _STRING},
    },
    # Both required: a server that enforces the schema lets a small model close the object
    # after the required fields only (SmolLM2 never wrote MEMORY.md with one). A prompt-only
    # answer with one field still applies it (seed 004).
    ["history_entry", "memory_update"],
)
EXTRACTION_SCHEMA = _object(
    {
        "facts": {
            "type": "array",
            "items": _object(
                {"content": _STRING, "category": _STRING, "importance": {"type": "number"}},
                ["content"],
            ),
        }
    },
    ["facts"],
)
COMPRESSION_SCHEMA = _object({"memory": _STRING}, ["memory"])

# Triggers whose runs nobody waits for, when no deadline says otherwise (get_context's
# "wait" passes one; so does /reset).
BACKGROUND_TRIGGERS = (Trigger.AUTO, Trigger.BEAT, Trigger.CONTEXT, Trigger.REVIEW)
# The extra output a compression may take over MEMORY.md's own size (~3 bytes a token).
COMPRESSION_MARGIN_TOKENS = 256
MAX_OUTPUT_TOKENS = 100_000


def is_background(trigger: str, deadline: float | None) -> bool:
    return deadline is None and trigger in BACKGROUND_TRIGGERS


def call_seconds(config: AgentConfig, *, trigger: str, deadline: float | None) -> float:
    """Seconds one call may take: MEMORYHUB_LLM_BACKGROUND_TIMEOUT in the background, the
    agent's consolidation_timeout_seconds for a caller who waits, never past `deadline`."""
    if is_background(trigger, deadline):
        return background_timeout()
    return remaining(deadline, config.consolidation_timeout_seconds)


def run_lease_ttl(config: AgentConfig, *, trigger: str, deadline: float | None) -> float:
    """A lease held across a call outlives the call (plus the lease margin)."""
    cap = background_timeout() if is_background(trigger, deadline) else 0.0
    return lease_ttl(max(cap, config.consolidation_timeout_seconds))


def output_tokens(limit: int) -> int:
    """A kind's max_tokens, at most half the model's context so a prompt still fits."""
    return max(1, min(int(limit), context_tokens() // 2, MAX_OUTPUT_TOKENS))


def compression_tokens(max_memory_bytes: int) -> int:
    """max_tokens of a compression: MEMORY.md's limit in tokens (~3 bytes each) + a margin."""
    return output_tokens(max_memory_bytes // 3 + COMPRESSION_MARGIN_TOKENS)


@dataclass
class Fitted:
    """A prompt that fits: it carries `messages[:count]` (the last maybe cut) and
    `reference` (the old summary or MEMORY.md, maybe cut); `cut` says what, for the run."""

    prompt: list[ChatMessage]
    count: int
    reference: str
    cut: dict = field(default_factory=dict)
    fits: bool = True
    bare: list[ChatMessage] = field(default_factory=list)  # the instructions alone (echo.py)


def cut_to_tokens(text: str, allow: int) -> str:
    """The longest head of `text` (on a line break when there is one) within `allow` tokens."""
    if allow <= 0:
        return ""
    if count_tokens(text) <= allow:
        return text
    low, high = 0, len(text)
    while low < high:  # binary search on characters: tokens grow with the head's length
        mid = (low + high + 1) // 2
        if count_tokens(text[:mid]) <= allow:
            low = mid
        else:
            high = mid - 1
    head = text[:low]
    newline = head.rfind("\n")
    return head[: newline + 1] if newline > len(head) // 2 else head


_MARKER_TOKENS = 16


def _cut_message(message: Message, allow: int) -> Message:
    """A copy of `message` whose formatted line fits `allow` tokens (content cut, marked)."""
    clone = copy.copy(message)
    text = message.content or ""
    clone.content = ""
    frame = count_tokens(format_message(clone)) + _MARKER_TOKENS
    head = cut_to_tokens(text, allow - frame)
    clone.content = head + f" […{len(text) - len(head)} more characters]"
    return clone


def fit_prompt(
    build: Callable[[str, list], list[ChatMessage]],
    *,
    messages: Sequence,
    reference: str,
    max_tokens: int,
) -> Fitted:
    """The prompt `build(reference, messages)` cut to fit beside `max_tokens` of output:
    the messages a prefix (at least one, cut if alone too long), the reference text cut
    when the fixed parts would leave the messages less than half the budget."""
    budget = prompt_budget(max_tokens)
    cut: dict = {}
    half = budget // 2 if messages else budget
    if messages_tokens(build(reference, [])) > half:
        bare = messages_tokens(build("", []))
        head = cut_to_tokens(reference, half - bare)
        cut["reference"] = {"chars": len(reference), "kept_chars": len(head)}
        reference = head
    room = budget - messages_tokens(build(reference, []))
    lines = [format_message(m) for m in messages]
    taken, used = [], 0
    for message, cost in zip(messages, count_tokens_batch(lines), strict=True):
        if used + cost + 1 > room:
            break
        taken.append(message)
        used += cost + 1
    if messages and not taken:
        taken = [_cut_message(messages[0], room)]
        cut["message"] = {"id": str(messages[0].pk), "chars": len(messages[0].content or "")}
    prompt = build(reference, taken)
    while messages_tokens(prompt) > budget and len(taken) > 1:
        taken.pop()
        prompt = build(reference, taken)
    allow = room
    while messages_tokens(prompt) > budget and len(taken) == 1 and allow > 0:
        allow //= 2  # the estimate of a line and of the prompt differ: cut further
        taken = [_cut_message(messages[0], allow)]
        cut["message"] = {"id": str(messages[0].pk), "chars": len(messages[0].content or "")}
        prompt = build(reference, taken)
    if len(taken) < len(messages):
        cut["messages"] = {"given": len(messages), "sent": len(taken)}
    fits = messages_tokens(prompt) <= budget
    return Fitted(prompt, len(taken), reference, cut, fits, bare=build("", []))


def fit_chunk(fit: Callable[[list], Fitted], messages: list) -> tuple[list, Fitted]:
    """The longest head of `messages` whose prompt, `fit(head)`, carries all of it (the rest
    waits for the next chunk), and that prompt."""
    while True:
        fitted = fit(messages)
        if fitted.count >= len(messages):
            return messages, fitted
        messages = messages[: fitted.count]
