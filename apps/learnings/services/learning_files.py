"""Seed 001's learnings files, rendered from Learning rows, and read back on import.

`learnings/errors.md` holds the error learnings, `learnings/corrections.md` the corrections.
Each learning is `## <ISO time, microseconds, UTC>`, an HTML comment with its source, status
and session, then its text, so a workspace round trip restores every field but the link to
an error record (error records are not exported). Text outside the sections (a file written
by hand) is read too: each bullet item becomes a learning.
"""

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db import transaction
from django.utils import timezone

from apps.agents.models import Agent
from apps.core.errors import InvalidInput
from apps.learnings.models import Learning, LearningKind, LearningSource, LearningStatus

ERRORS = "learnings/errors.md"
CORRECTIONS = "learnings/corrections.md"
FILES = {LearningKind.ERROR: ERRORS, LearningKind.CORRECTION: CORRECTIONS}
TITLES = {
    LearningKind.ERROR: "# Learnings: errors",
    LearningKind.CORRECTION: "# Learnings: corrections",
}

_HEADER = re.compile(r"^## (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6})Z$")
_ITEM = re.compile(r"^\s*[-*]\s+(.*\S)\s*$")
_META = re.compile(r"^<!-- source: (\w+); status: (\w+)(?:; session: (.*))? -->$")


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _section(learning: Learning) -> str:
    # A user's session key is theirs (issue 39): an error learning from them never shows it.
    shown = learning.session_key and not (learning.kind == "error" and learning.origin_user)
    session = f"; session: {learning.session_key}" if shown else ""
    return (
        f"## {_iso(learning.created_at)}\n"
        f"<!-- source: {learning.source}; status: {learning.status}{session} -->\n\n"
        f"{learning.content.strip()}\n\n"
    )


def learnings_files(*, agent: Agent, owner: str | None = None) -> dict[str, str]:
    """Both files (every status; `owner`'s learnings alone when given), each only when it
    has a learning."""
    files = {}
    for kind, name in FILES.items():
        rows = Learning.objects.filter(agent=agent, kind=kind).order_by("created_at", "id")
        if owner is not None:
            rows = rows.filter(user=owner)
        sections = [_section(row) for row in rows]
        if sections:
            files[name] = TITLES[kind] + "\n\n" + "".join(sections)
    return files


def _loose(kind: str, lines: list[str]) -> list[Learning]:
    """Text outside any `## <time>` section (a file written by hand, or by another tool):
    each bullet item is a learning, or the whole text is one if it has none."""
    items = [m.group(1) for line in lines if (m := _ITEM.match(line))]
    items = items or (["\n".join(lines).strip()] if "".join(lines).strip() else [])
    now = timezone.now()
    return [Learning(kind=kind, content=item, created_at=now, updated_at=now) for item in items]


@dataclass
class _Block:
    """One learning being read: its header's time, its meta line's fields, its body."""

    at: datetime
    fields: dict[str, str] = field(default_factory=dict)  # source, status, session_key
    body: list[str] = field(default_factory=list)
    meta: bool = False


def _parse(kind: str, name: str, text: str) -> list[Learning]:
    rows: list[Learning] = []
    current: _Block | None = None
    loose: list[str] = []

    def close() -> None:
        if current is not None:
            rows.append(
                Learning(
                    kind=kind,
                    content="\n".join(current.body).strip(),
                    created_at=current.at,
                    updated_at=current.at,
                    **current.fields,
                )
            )

    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            close()
            at = datetime.strptime(header.group(1), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC)
            current = _Block(at)
        elif current is not None and not current.meta and (meta := _META.match(line)):
            source, status, session = meta.groups()
            if source not in LearningSource.values or status not in LearningStatus.values:
                raise InvalidInput(f"'{name}' has an unknown source or status: {line}")
            current.fields.update(source=source, status=status, session_key=session or "")
            current.meta = True
        elif current is not None:
            current.body.append(line)
        elif not line.startswith("# "):
            loose.append(line)
    close()
    return _loose(kind, loose) + [row for row in rows if row.content]


@transaction.atomic
def learnings_import(*, agent: Agent, files: dict[str, str]) -> int:
    """Read learnings files (as exported) into rows; a learning already present (same kind,
    time and text) is not added twice. Returns how many were added."""
    present = set(Learning.objects.filter(agent=agent).values_list("kind", "created_at", "content"))
    new = []
    for kind, name in FILES.items():
        if name not in files:
            continue
        for row in _parse(kind, name, files[name]):
            if (row.kind, row.created_at, row.content) not in present:
                row.agent = agent
                new.append(row)
    Learning.objects.bulk_create(new)
    return len(new)
