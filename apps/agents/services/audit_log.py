"""Recording a change in the audit log, with JSON-safe snapshots before and after."""

import json
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Model

from apps.agents.models import Agent, AuditEvent


class _AuditEncoder(DjangoJSONEncoder):
    """Django's encoder, with full microseconds and str() for anything else (a related row)."""

    def default(self, o: Any) -> Any:  # Any: JSONEncoder.default's own types
        if isinstance(o, datetime):
            return o.isoformat()
        try:
            return super().default(o)
        except TypeError:
            return str(o)


# Any: JSON values, as a JSONField (AuditEvent.before and after) holds them.
def json_safe(values: dict[str, Any]) -> dict[str, Any]:
    """`values` as JSON would store them (ISO times, str() for anything else)."""
    return json.loads(json.dumps(values, cls=_AuditEncoder))


# Any: as json_safe's.
def snapshot(obj: object, fields: list[str]) -> dict[str, Any]:
    """The named fields of `obj` as JSON-safe values, for an audit event's before/after."""
    return json_safe({name: getattr(obj, name) for name in fields})


def audit_record(
    *,
    user: User | AnonymousUser,
    agent: Agent | None,
    source: str,
    action: str,
    target: Model | str,
    # Any: JSON snapshots, as json_safe makes them.
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    username: str = "",
) -> AuditEvent:
    """Record a change made to `target` (`source`: "review" or "admin"; "api" or "cli" too
    for an erasure), with JSON-safe snapshots before and after; `username` names who it was
    when no person did it (an API key, a command). Joins the caller's transaction."""
    return AuditEvent.objects.create(
        agent=agent,
        user=user if isinstance(user, User) and user.pk else None,
        username=getattr(user, "username", "") or username,
        source=source,
        action=action,
        object_type=(target._meta.model_name or "") if isinstance(target, Model) else target,
        object_id=str(target.pk or "") if isinstance(target, Model) else "",
        before=before,
        after=after,
    )
