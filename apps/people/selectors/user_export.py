"""A user's own data as JSON (issue 26's data-access request): their sessions with every
message, their facts with every version, and the raw text of their failing tool calls, which
error memory shares with others only de-identified (issue 39). Entries, HISTORY and learnings
travel beside it in the workspace archive as files."""

import json

from apps.agents.models import Agent
from apps.conversations.models import Message
from apps.conversations.selectors import session_messages, user_sessions
from apps.facts.models import Fact
from apps.facts.selectors import facts_of_user
from apps.learnings.models import ErrorDetail
from apps.learnings.selectors import error_details_of_user


def _message(m: Message) -> dict[str, object]:
    return {
        "id": str(m.id),
        "role": m.role,
        "name": m.name,
        "content": m.content,
        "tool_name": m.tool_name,
        "tool_calls": m.tool_calls_json,
        "created_at": m.created_at.isoformat(),
        "metadata": m.metadata,
    }


def _fact(f: Fact) -> dict[str, object]:
    return {
        "id": f.pk,
        "category": f.category.name,
        "key": f.key,
        "value": f.value,
        "status": f.status,
        "valid_from": f.valid_from.isoformat(),
        "valid_to": f.valid_to.isoformat() if f.valid_to else None,
        "versions": [
            {
                "number": v.number,
                "old_value": v.old_value,
                "new_value": v.new_value,
                "changed_by": v.changed_by,
                "reason": v.reason,
                "changed_at": v.changed_at.isoformat(),
            }
            for v in sorted(f.versions.all(), key=lambda v: v.number)
        ],
    }


def _failure(d: ErrorDetail) -> dict[str, object]:
    # what everyone else reads of it: the record's error, or the learning's text
    shared = d.record.error if d.record else d.learning.content if d.learning else ""
    return {
        "of": "error_record" if d.record else "learning",
        "tool_name": d.record.tool_name if d.record else "",
        "shared_as": shared,
        "error": d.error,
        "arguments": d.arguments,
        "request": d.request,
        "strategy": d.strategy,
        "resolution": d.resolution,
        "content": d.content,
        "session_key": d.session_key,
        "created_at": d.created_at.isoformat(),
    }


def user_data(*, agent: Agent, user: str) -> str:
    """`user`'s sessions (with messages, oldest first) and facts as indented JSON."""
    sessions = [
        {
            "id": str(s.id),
            "key": s.key,
            "title": s.title,
            "created_at": s.created_at.isoformat(),
            "messages": [_message(m) for m in session_messages(session=s).defer("embedding")],
        }
        for s in user_sessions(agent=agent, user=user)
    ]
    facts = [_fact(f) for f in facts_of_user(agent=agent, user=user)]
    failures = [_failure(d) for d in error_details_of_user(agent=agent, user=user)]
    body = {
        "user": user,
        "agent": agent.slug,
        "sessions": sessions,
        "facts": facts,
        "failures": failures,
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"
