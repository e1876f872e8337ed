"""Tool-call turns in get_context: an assistant message with tool_calls and the tool
results answering them are one unit, kept or dropped whole (apps/conversations/tool_call_pairs.py).

The recency leg is the session's newest run of messages, already reaching back to the calls
of the results it opens on (window_messages), and every message after one of its calls is in
it. A message only the salience or relevance leg found may be half a turn: its call or its
results are read here (leg "turn"), one query per such message, none when there is none.
"""

from collections.abc import Iterable

from apps.conversations.models import Message
from apps.conversations.selectors import after
from apps.conversations.tool_call_pairs import answers, call_ids
from apps.memory.context.types import Candidate, ContextRequest

# Tool-calling assistant messages read back for the call a result answers.
CALL_LOOKBACK = 50
LEG = "turn"

Units = dict  # message id -> the candidates of its unit, in session order


def _order(c: Candidate) -> tuple:
    return (c.message.created_at, str(c.message.id))


def _issuers(candidates: Iterable[Candidate]) -> dict:
    """Each tool result's issuing candidate (the newest call of its id before it), by the
    result's message id."""
    issuer: dict[str, Candidate] = {}
    out = {}
    for c in sorted(candidates, key=_order):
        issuer.update(dict.fromkeys(call_ids(c.message), c))
        ident = answers(c.message)
        if ident is not None and ident in issuer:
            out[c.message.id] = issuer[ident]
    return out


def _add(found: dict, message: Message) -> None:
    if message.id not in found:
        found[message.id] = Candidate(
            message, legs=[LEG], tokens=message.token_count, content=message.content
        )


def _find_call(request: ContextRequest, result: Message) -> Message | None:
    """The newest assistant message at or before `result` making the call it answers."""
    rows = (
        Message.objects.filter(
            session=request.session,
            role="assistant",
            tool_calls_json__isnull=False,
            created_at__lte=result.created_at,
        )
        .exclude(pk=result.pk)
        .defer("embedding")
        .order_by("-created_at", "-id")[:CALL_LOOKBACK]
    )
    return next((m for m in rows if result.tool_call_id in call_ids(m)), None)


def _find_results(request: ContextRequest, call: Message, ids: set[str]) -> list[Message]:
    """The first tool message after `call` answering each of `ids`."""
    rows = (
        Message.objects.filter(session=request.session, role="tool", tool_call_id__in=ids)
        .filter(after(call.created_at, call.pk))
        .defer("embedding")
        .order_by("created_at", "id")[: len(ids) * 4]
    )
    first: dict[str, Message] = {}
    for m in rows:
        first.setdefault(m.tool_call_id or "", m)
    return [m for ident, m in first.items() if ident in ids]


def complete_turns(request: ContextRequest, found: dict, recent: list[Message]) -> None:
    """Add to `found` the calls and results that its messages outside the recency leg lack."""
    in_recency = {m.id for m in recent}
    issued = _issuers(found.values())
    for c in list(found.values()):
        m = c.message
        if m.id not in in_recency and answers(m) is not None and m.id not in issued:
            call = _find_call(request, m)
            if call is not None:
                _add(found, call)
    issued = _issuers(found.values())
    answered: dict = {}
    for result_id, call in issued.items():
        answered.setdefault(call.message.id, set()).add(found[result_id].message.tool_call_id)
    for c in list(found.values()):
        m = c.message
        missing = set(call_ids(m)) - answered.get(m.id, set())
        if missing and m.id not in in_recency:
            for result in _find_results(request, m, missing):
                _add(found, result)


def turn_units(found: dict) -> Units:
    """Every candidate's unit: a call with its results, or the message alone."""
    members: dict = {c.message.id: [c] for c in found.values()}
    for result_id, call in _issuers(found.values()).items():
        unit = members[call.message.id]
        result = found[result_id]
        if result not in unit:
            unit.append(result)
        members[result_id] = unit
    return {ident: sorted(unit, key=_order) for ident, unit in members.items()}
