"""Numbers for the dashboard and the agent page (counts, backlog, activity per day) and
the sessions list by last activity, in a fixed number of queries."""

import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from django.db.models import Aggregate, Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from apps.agents.models import Agent
from apps.conversations.models import Message, Session
from apps.facts.models import Fact, FactStatus
from apps.lifecycle.models import Run, RunKind
from apps.search.selectors import Pending, backlogs_by_agent

ACTIVITY_DAYS = 30


@dataclass(frozen=True)
class DayCount:
    day: date
    count: int


@dataclass
class AgentStats:
    """What the dashboard shows for one agent."""

    agent: Agent
    sessions: int = 0
    messages: int = 0
    facts: int = 0  # current facts (not superseded), pending ones included
    pending_reviews: int = 0
    backlog: list[Pending] = field(default_factory=list)
    last_consolidation: Run | None = None
    activity: list[DayCount] = field(default_factory=list)

    @property
    def backlog_total(self) -> int:
        return sum(b.pending + b.failed for b in self.backlog)


def _counts_by_agent(qs: QuerySet, ids: list[int], **aggregates: Aggregate) -> dict[int, dict]:
    rows = qs.filter(agent_id__in=ids).values("agent_id").annotate(**aggregates)
    return {row.pop("agent_id"): row for row in rows}


def _last_consolidations(ids: list[int]) -> dict[int, Run]:
    newest = Run.objects.filter(agent=OuterRef("pk"), kind=RunKind.CONSOLIDATE).order_by(
        "-created_at", "-id"
    )
    run_ids = (
        Agent.objects.filter(pk__in=ids)
        .annotate(run_id=Subquery(newest.values("id")[:1]))
        .values_list("pk", "run_id")
    )
    by_agent = {pk: run_id for pk, run_id in run_ids if run_id is not None}
    runs = Run.objects.defer("output").in_bulk(list(by_agent.values()))
    return {pk: runs[run_id] for pk, run_id in by_agent.items()}


def activity_days(*, now: datetime | None = None, days: int = ACTIVITY_DAYS) -> list[date]:
    """The last `days` UTC days, oldest first, today included."""
    today = (now or timezone.now()).astimezone(UTC).date()
    return [today - timedelta(days=days - 1 - i) for i in range(days)]


def _activity(ids: list[int], now: datetime | None, days: int) -> dict[int, list[DayCount]]:
    span = activity_days(now=now, days=days)
    start = datetime.combine(span[0], datetime.min.time(), tzinfo=UTC)
    rows = (
        Message.objects.filter(agent_id__in=ids, created_at__gte=start)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values("agent_id", "day")
        .annotate(n=Count("pk"))
    )
    counts: dict[int, dict[date, int]] = defaultdict(dict)
    for row in rows:
        day = row["day"]
        day = date.fromisoformat(day) if isinstance(day, str) else day
        counts[row["agent_id"]][day] = row["n"]
    return {pk: [DayCount(d, counts[pk].get(d, 0)) for d in span] for pk in ids}


def agent_stats(
    *, agents: list[Agent], now: datetime | None = None, days: int = ACTIVITY_DAYS
) -> list[AgentStats]:
    """The dashboard's numbers for each agent, in the given order, in a fixed number of
    queries whatever the number of agents or days."""
    ids = [a.pk for a in agents]
    if not ids:
        return []
    sessions = _counts_by_agent(Session.objects.all(), ids, n=Count("pk"))
    messages = _counts_by_agent(Message.objects.all(), ids, n=Count("pk"))
    facts = _counts_by_agent(
        Fact.objects.current(),
        ids,
        n=Count("pk"),
        pending=Count("pk", filter=Q(status=FactStatus.PENDING)),
    )
    backlogs = backlogs_by_agent(agent_ids=ids)
    consolidations = _last_consolidations(ids)
    activity = _activity(ids, now, days)
    return [
        AgentStats(
            agent=a,
            sessions=sessions.get(a.pk, {}).get("n", 0),
            messages=messages.get(a.pk, {}).get("n", 0),
            facts=facts.get(a.pk, {}).get("n", 0),
            pending_reviews=facts.get(a.pk, {}).get("pending", 0),
            backlog=backlogs[a.pk],
            last_consolidation=consolidations.get(a.pk),
            activity=activity[a.pk],
        )
        for a in agents
    ]


def sessions_by_activity(
    *, agent: Agent, q: str = "", user: str | None = None
) -> QuerySet[Session]:
    """The agent's sessions, most recently active first: the newest message's time (one
    index seek per session on message_session_time), else the session's updated_at;
    `q` matches key or title, case-insensitively; `user` keeps one user's ("" the sessions
    without a user, None all)."""
    newest = (
        Message.objects.filter(session=OuterRef("pk"))
        .order_by("-created_at", "-id")
        .values("created_at")[:1]
    )
    qs = Session.objects.filter(agent=agent).annotate(
        last_activity=Coalesce(Subquery(newest), "updated_at")
    )
    if q:
        qs = qs.filter(Q(key__icontains=q) | Q(title__icontains=q))
    if user is not None:
        qs = qs.filter(user=user)
    return qs.order_by("-last_activity", "-created_at")


def message_counts(*, sessions: list[Session]) -> dict[uuid.UUID, int]:
    """How many messages each of these sessions has (for one page of the list)."""
    rows = (
        Message.objects.filter(session__in=[s.pk for s in sessions])
        .values("session_id")
        .annotate(n=Count("pk"))
    )
    return {r["session_id"]: r["n"] for r in rows}
