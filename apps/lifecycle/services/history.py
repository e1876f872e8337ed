"""Seed 004's history files, rendered from HistoryEntry rows, and read back on import.

`memory/HISTORY-YYYY-MM.md` holds a month, `memory/HISTORY.md` all time (seed 004 keeps it
for backward compatibility). Each entry is `## <ISO time>` (milliseconds, UTC), an HTML
comment naming the session, then the text: grep finds it, Markdown hides the comment, and
import reads the monthly files back into rows exactly.
"""

import re
from collections import defaultdict
from datetime import UTC, datetime

from django.db import transaction

from apps.agents.models import Agent
from apps.agents.users import Audience
from apps.core.errors import InvalidInput
from apps.entries import names
from apps.lifecycle.models import HistoryEntry, HistoryKind
from apps.search.embedding_queue import schedule_embedding

_HEADER = re.compile(r"^## (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)$")
_SESSION = re.compile(r"^<!-- session: (.*) -->$")
_MONTH = re.compile(r"^memory/HISTORY-(\d{4}-\d{2})\.md$")
_YEAR_MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")


def month_range(month: str) -> tuple[datetime, datetime]:
    """[first instant, first instant of the next month) of `YYYY-MM`, in UTC; InvalidInput
    for anything else."""
    match = _YEAR_MONTH.match(month)
    if match is None:
        raise InvalidInput("month must be YYYY-MM", loc=["query", "month"])
    year, number = int(match.group(1)), int(match.group(2))
    start = datetime(year, number, 1, tzinfo=UTC)
    return start, datetime(year + number // 12, number % 12 + 1, 1, tzinfo=UTC)


def iso_ms(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def _section(entry: HistoryEntry) -> str:
    session = f"<!-- session: {entry.session_key} -->\n" if entry.session_key else ""
    return f"## {iso_ms(entry.created_at)}\n{session}\n{entry.content.strip()}\n\n"


def history_files(
    *,
    agent: Agent,
    month: str | None = None,
    audience: Audience,
    owner: str | None = None,
) -> dict[str, str]:
    """The history files of the entries `audience` sees (or `owner`'s alone) by name: one
    per month with entries and the all-time HISTORY.md; with `month` (YYYY-MM), only that
    month's file. Empty when none."""
    months: dict[str, list[str]] = defaultdict(list)
    every: list[str] = []
    qs = HistoryEntry.objects.filter(audience.q(), agent=agent)
    if owner is not None:
        qs = qs.filter(user=owner)
    qs = qs.order_by("created_at", "id").defer("embedding")
    if month is not None:
        start, end = month_range(month)
        qs = qs.filter(created_at__gte=start, created_at__lt=end)
    for entry in qs:
        section = _section(entry)
        months[entry.created_at.strftime("%Y-%m")].append(section)
        every.append(section)
    if not every:
        return {}
    files = {} if month is not None else {names.HISTORY: "# History\n\n" + "".join(every)}
    for month, sections in months.items():
        files[names.history_month_name(month)] = f"# History {month}\n\n" + "".join(sections)
    return files


def _parse(name: str, text: str) -> list[HistoryEntry]:
    rows: list[HistoryEntry] = []
    at, session_key = None, ""
    body: list[str] = []

    def close() -> None:
        if at is not None:
            content = "\n".join(body).strip()
            kind = (
                HistoryKind.RAW_FALLBACK if content.startswith("[raw-fallback]") else HistoryKind.OK
            )
            rows.append(
                HistoryEntry(created_at=at, session_key=session_key, content=content, kind=kind)
            )

    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            close()
            at = datetime.strptime(header.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
            session_key, body = "", []
        elif at is not None and not body and not session_key and (m := _SESSION.match(line)):
            session_key = m.group(1)
        elif at is not None:
            body.append(line)
        elif line.strip() and not line.startswith("# "):
            # Text no entry holds would be lost on import: refuse the file instead.
            raise InvalidInput(
                f"'{name}' has text outside '## <time>' sections: {line[:80]!r}", loc=["body"]
            )
    close()
    return rows


@transaction.atomic
def history_import(*, agent: Agent, files: dict[str, str]) -> int:
    """Read monthly history files (as exported) into rows; entries already present (same
    time and text) are not added twice. HISTORY.md repeats the months and is ignored."""
    present = {
        (iso_ms(at), content)
        for at, content in HistoryEntry.objects.filter(agent=agent).values_list(
            "created_at", "content"
        )
    }
    new = []
    for name, text in sorted(files.items()):
        if name == names.HISTORY:
            continue
        month = _MONTH.match(name)
        if month is None:
            raise InvalidInput(f"'{name}' is not a history file", loc=["body"])
        for row in _parse(name, text):
            if row.created_at.strftime("%Y-%m") != month.group(1):
                raise InvalidInput(f"'{name}' holds an entry of {iso_ms(row.created_at)}")
            if (iso_ms(row.created_at), row.content) not in present:
                row.agent = agent
                new.append(row)
    created = HistoryEntry.objects.bulk_create(new)
    if created:
        schedule_embedding(corpus="history", agent_id=agent.pk)
    return len(created)
