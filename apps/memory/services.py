"""Seed 001's memory tools: memory_save (structured store + daily log), memory_recall."""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from apps.agents.models import Agent
from apps.conversations.selectors import session_get
from apps.entries import names
from apps.entries.services import entry_append
from apps.facts.services import RecallResult, SaveResult, fact_prepare, fact_write, facts_recall


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
) -> MemorySaveResult:
    """Store a fact (with dedup) and append it to today's log `memory/YYYY-MM-DD.md` (UTC),
    both in one transaction; the fact's vectors are computed before it opens."""
    session = session_get(agent=agent, ref=session_ref) if session_ref else None
    draft = fact_prepare(
        agent=agent,
        content=content,
        category=category,
        key=key,
        importance=importance,
        session_id=session.id if session is not None else None,
    )
    with transaction.atomic():
        saved = fact_write(draft=draft)
        day = timezone.now().date()
        log_name = names.daily_log_name(day)
        entry_append(
            agent=agent,
            name=log_name,
            text=_log_line(saved, content),
            header=f"# {day.isoformat()}\n\n",
        )
    return MemorySaveResult(saved=saved, log_name=log_name)


def memory_recall(
    *, agent: Agent, query: str, category: str | None = None, k: int | None = None
) -> RecallResult:
    """Semantic recall over facts with seed 001's 3-tier fallback; recalled facts reinforced."""
    return facts_recall(agent=agent, query=query, category=category, k=k)
