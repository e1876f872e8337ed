"""Seed 001's memory tools: memory_save (a fact and today's log line) and memory_recall."""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from apps.agents.models import Agent
from apps.agents.users import Audience, Scope
from apps.conversations.selectors import session_get
from apps.entries import names
from apps.entries.services import entry_append
from apps.facts.models import FactStatus
from apps.facts.services import RecallResult, SaveResult, fact_prepare, fact_write, facts_recall
from apps.people.selectors import session_audience


@dataclass(frozen=True)
class MemorySaveResult:
    saved: SaveResult
    log_name: str


def _log_line(result: SaveResult, content: str) -> str:
    fact = result.fact
    at = timezone.now().strftime("%H:%M:%S")
    note = "" if result.action == "created" else f" ({result.action} #{fact.pk})"
    # Continuation lines are indented so one save stays one list item in Markdown.
    body = "\n  ".join(content.strip().splitlines())
    return f"- {at} [{fact.category.name}/{fact.key}]{note} {body}\n"


def memory_save(
    *,
    agent: Agent,
    content: str,
    category: str | None = None,
    key: str | None = None,
    importance: float | None = None,
    session_ref: str | None = None,
    review: bool = False,
    user: str | None = None,
    scope: Scope | None = None,
) -> MemorySaveResult:
    """Store a fact (with dedup) and append it to today's log `memory/YYYY-MM-DD.md` (UTC),
    both in one transaction; the fact's vectors are computed before it opens. With `review`
    and the agent's fact_review on, the fact waits as pending and is not logged (the log is
    searchable; a pending fact must not be found): `log_name` is then "". The fact and the
    log belong to the session's user (or `user`), unless `scope` is "agent"."""
    session = session_get(agent=agent, ref=session_ref) if session_ref else None
    owner = session_audience(session, user).owner(scope)
    draft = fact_prepare(
        user=owner,
        agent=agent,
        content=content,
        category=category,
        key=key,
        importance=importance,
        session_id=session.id if session is not None else None,
        pending=review and agent.config.fact_review,
    )
    with transaction.atomic():
        saved = fact_write(draft=draft)
        if saved.fact.status == FactStatus.PENDING:
            return MemorySaveResult(saved=saved, log_name="")
        day = timezone.now().date()
        log_name = names.daily_log_name(day)
        entry_append(
            agent=agent,
            name=log_name,
            text=_log_line(saved, content),
            header=f"# {day.isoformat()}\n\n",
            owner=owner,
        )
    return MemorySaveResult(saved=saved, log_name=log_name)


def memory_recall(
    *,
    agent: Agent,
    query: str,
    audience: Audience,
    category: str | None = None,
    k: int | None = None,
) -> RecallResult:
    """Semantic recall over the facts `audience` sees, with seed 001's 3-tier fallback;
    recalled facts reinforced."""
    return facts_recall(agent=agent, query=query, category=category, k=k, audience=audience)
