"""Seed 001's daily session log (`memory/YYYY-MM-DD.md`, UTC) from the lifecycle: every
applied consolidation run adds one line, and a session's first summary of the day adds one,
written in the run's transaction.

A busy session is summarised every 16 messages; a line for each would fill the day's log
with near-copies of one rolling summary, and every append re-indexes the whole log for
search (measured: 8 writers x 500 appends made the log the append path's main cost)."""

import logging
import re
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.agents.models import Agent
from apps.core.errors import Conflict
from apps.entries import names
from apps.entries.selectors import documents
from apps.entries.services import entry_append

logger = logging.getLogger(__name__)

MAX_LINE_TEXT = 200  # characters of the run's text on its log line
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_line(text: str) -> str:
    """The first non-empty line of `text` (a history entry's headline)."""
    return next((line for line in text.splitlines() if line.strip()), "")


def first_sentence(text: str) -> str:
    """The first sentence of `text` (a summary's opening), on one line."""
    line = " ".join(text.split())
    return _SENTENCE_END.split(line, maxsplit=1)[0]


def log_line(*, kind: str, session_key: str, text: str, at: datetime | None = None) -> str:
    """`- HH:MM:SS [<kind>] <session key>: <text>`, the text on one line and bounded."""
    at = at or timezone.now()
    shown = " ".join(text.replace("\x00", "").split())
    if len(shown) > MAX_LINE_TEXT:
        shown = shown[: MAX_LINE_TEXT - 1].rstrip() + "…"
    return f"- {at:%H:%M:%S} [{kind}] {session_key}: {shown}\n"


def _logged_today(agent: Agent, owner: str, name: str, kind: str, session_key: str) -> bool:
    log = documents(agent=agent, names=[name], owner=owner).get(name)
    return log is not None and f" [{kind}] {session_key}: " in log.content


def daily_log_append(
    *,
    agent: Agent,
    kind: str,
    session_key: str,
    text: str,
    once_a_day: bool = False,
    owner: str = "",
) -> str:
    """Append the run's line to today's log (inside the caller's transaction); returns the
    log's name, or "" when no line was written: `once_a_day` and the session has a line of
    this kind today, or the name is taken by something a log cannot append to (an archive
    or an alias): the run still applies. A user's session logs to that user's log."""
    now = timezone.now()
    day = now.date()
    name = names.daily_log_name(day)
    if once_a_day and _logged_today(agent, owner, name, kind, session_key):
        return ""
    try:
        with transaction.atomic():  # a savepoint: a refused append leaves the run intact
            entry_append(
                agent=agent,
                name=name,
                text=log_line(kind=kind, session_key=session_key, text=text, at=now),
                header=f"# {day.isoformat()}\n\n",
                owner=owner,
            )
    except Conflict as exc:
        logger.warning("daily log %s of agent %s not appended: %s", name, agent.pk, exc)
        return ""
    return name
