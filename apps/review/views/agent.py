"""The agent's overview page and its audit log."""

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.agents.models import AuditEvent
from apps.agents.selectors import audit_events
from apps.agents.users import EVERYONE
from apps.lifecycle.selectors import runs_page
from apps.people.services.erasure_audit import ACTION as ERASE_ACTION
from apps.people.services.user_erasure import CLEARED, UserErased
from apps.review.access import Access, agent_list, agent_page
from apps.review.charts import activity_chart
from apps.review.selectors import agent_stats, sessions_by_activity
from apps.review.views.common import rows_named

AUDIT_PAGE = 200
ERASED_KINDS = [f.name for f in fields(UserErased)]  # what an erasure's event counts
_MISSING = object()


@dataclass(frozen=True)
class Change:
    """One key of an audited object, before and after (None: absent on that side)."""

    key: str
    before: str | None
    after: str | None


def _shown(value: object) -> str | None:
    if value is _MISSING:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def audit_changes(before: dict | None, after: dict | None) -> list[Change]:
    """The keys whose value differs between the two snapshots, by name (PostgreSQL's jsonb
    does not keep the keys' order)."""
    before, after = before or {}, after or {}
    keys = sorted({*before, *after})
    return [
        Change(key=k, before=_shown(before.get(k, _MISSING)), after=_shown(after.get(k, _MISSING)))
        for k in keys
        if before.get(k, _MISSING) != after.get(k, _MISSING)
    ]


@dataclass(frozen=True)
class AuditRow:
    """An audit event as the log shows it: the keys its change touched, or, for a user's
    erasure, what it erased, counted (its `before` is counts, not a value it removed)."""

    event: AuditEvent
    changes: list[Change]
    erased: list[tuple[int, str]] | None = None  # (count, rows named), of the kinds it found
    cleared: list[tuple[int, str]] = field(default_factory=list)  # links and snapshots it cleared
    user_hmac: str = ""  # an erasure's: the user as a keyed hash (erasure_audit.user_hmac)


def audit_row(event: AuditEvent) -> AuditRow:
    """One event of the log (AuditRow)."""
    if event.action == ERASE_ACTION and isinstance(event.before, dict):
        # In UserErased's order: PostgreSQL's jsonb does not keep the keys'.
        counted = {k: n for k, n in event.before.items() if isinstance(n, int) and n}
        counts = [(k, counted[k]) for k in ERASED_KINDS if k in counted]
        user_hash = event.before.get("user_hmac")
        return AuditRow(
            event=event,
            changes=[],
            erased=[(n, rows_named(k, n)) for k, n in counts if k not in CLEARED],
            cleared=[
                (n, rows_named(k.removesuffix("_cleared"), n)) for k, n in counts if k in CLEARED
            ],
            user_hmac=user_hash if isinstance(user_hash, str) else "",
        )
    return AuditRow(event=event, changes=audit_changes(event.before, event.after))


def _rows(events: Iterable[AuditEvent]) -> list[AuditRow]:
    return [audit_row(e) for e in events]


@agent_page
def agent_detail(request: HttpRequest, access: Access) -> HttpResponse:
    """Counts, activity, the latest sessions and runs, and the last audit events."""
    [stats] = agent_stats(agents=[access.agent])
    context = {
        "access": access,
        "tab": "agent",
        "stats": stats,
        "chart": activity_chart(stats.activity, title=f"Messages per day, {access.agent.slug}"),
        "sessions": list(sessions_by_activity(agent=access.agent)[:10]),
        "runs": runs_page(agent=access.agent, limit=10, audience=EVERYONE).items,
        "events": _rows(audit_events(agent=access.agent, limit=10)),
    }
    return render(request, "review/agent.html", context)


@agent_list
def audit_list(request: HttpRequest, access: Access) -> HttpResponse:
    """The agent's audit events, newest first, each with the keys its change touched."""
    events = audit_events(agent=access.agent, limit=AUDIT_PAGE)
    context = {"access": access, "tab": "audit", "events": _rows(events), "limit": AUDIT_PAGE}
    return render(request, "review/audit.html", context)
