"""Compaction (seeds 000 and 003): the oldest part of a session's hot history goes into an
Archive entry, behind a compact marker; no message is deleted.

When the bytes after start_at pass max_history_bytes, the oldest messages are trimmed until
the rest is compact_target_ratio of it, on a user+assistant pair boundary, never between a
tool call and its results (boundaries.py). The prefix is summarised (by the LLM, or
extractively) into `archive/<session key>/<n>`, a marker records it, and start_at moves:
the window replays from there. Search and /messages still see every message.

Nothing is compacted before its facts are extracted (seed 001): a compaction first runs the
EXTRACT flush (flush.py: the LLM, or the first-person fallback) on what it would archive,
and then cuts at or before the flush cursor. When the extraction cannot run (the agent's
lease stays taken) the cut stops at the cursor, or the run is skipped as `not_extracted`;
the next trigger or beat tries again.
"""

import re
from dataclasses import dataclass
from typing import ClassVar

from django.utils import timezone

from apps.conversations import selectors as conv
from apps.conversations.models import Message, Session, SessionMeta
from apps.conversations.services import Cursor, WindowCut, compact_marker_add
from apps.entries.services import archive_name_free, entry_archive_add
from apps.lifecycle.models import Run, RunKind, Trigger
from apps.lifecycle.services import boundaries
from apps.lifecycle.services.calls import ARCHIVE_SCHEMA, call_seconds, output_tokens
from apps.lifecycle.services.echo import Instructions
from apps.lifecycle.services.extractive import extractive_digest, extractive_lines
from apps.lifecycle.services.flush import session_flush
from apps.lifecycle.services.llm import NO_LLM, Answer, ask, llm_configured
from apps.lifecycle.services.prompts import archive_prompt
from apps.lifecycle.services.step import LeaseTerms, LifecycleStep, Recorder, run_once
from apps.lifecycle.services.step_parts import RunLog, Skip, Superseded
from apps.lifecycle.services.summary import session_summarize
from apps.providers.llm.budget import messages_tokens, prompt_budget
from apps.providers.llm.jsonparse import parse_llm_json_tiered

# Extractive archives keep the first and last lines of a long prefix (the messages
# themselves stay searchable; the archive is their digest).
EXTRACTIVE_MAX_LINES = 400
_UNSAFE = re.compile(r"[^A-Za-z0-9._:@\-]+")
TURN_FIELDS = ("id", "role", "created_at", "byte_size", "tool_call_id", "tool_calls_json")


def compaction_detail(session: Session, count: int) -> str:
    """The detail of the "add" change of a compaction's archive: it names the session, so
    the change log, which outlives the entry, says which session an archive was made for."""
    return f"session {session.key}: {count} messages"


def is_compaction_detail(session: Session, detail: str) -> bool:
    """Whether `detail` is compaction_detail(session, n) for some n."""
    return re.fullmatch(re.escape(f"session {session.key}: ") + r"\d+ messages", detail) is not None


def archive_prefix(session: Session) -> str:
    """`archive/<session key>`, the key made a safe entry-name segment."""
    key = _UNSAFE.sub("-", session.key).replace("..", ".").strip(".")[:150] or "session"
    return f"archive/{key}"


def _cut(session: Session, hot: list[Message], keep_last: int | None, trigger: str) -> int | None:
    config = session.agent.config
    turns = [boundaries.Turn.of(m) for m in hot]
    if keep_last is not None:
        return boundaries.cut_keep_last(turns, keep=keep_last)
    total = sum(t.size for t in turns)
    limit = config.max_history_bytes
    if total <= limit:
        if trigger != Trigger.API:
            return None
        limit = total  # on demand: any cut that archives something will do
    target = int(min(total, config.max_history_bytes) * config.compact_target_ratio)
    return boundaries.cut_for_size(turns, target=target, limit=limit)


@dataclass(frozen=True)
class _Plan:
    """What a compaction will do: archive the cut's prefix, and move start_at past it."""

    cut: WindowCut

    @property
    def messages(self) -> list[Message]:
        return list(self.cut.prefix)

    @property
    def details(self) -> dict:
        return {}


@dataclass(frozen=True)
class _Archive:
    text: str
    answer: Answer
    by_model: bool
    tier: int | None = None  # the JSON parse tier that read the answer; None: prose or none
    why: str = ""  # a fallback's reason is the answer's own
    failure: str = ""  # the extractive lines stand in for any answer


def _archive_text(
    session: Session, prefix: list[Message], deadline: float | None, trigger: str
) -> _Archive:
    """The archive's content (the LLM's summary, or extractive lines) and how it was made."""
    config = session.agent.config
    head = (
        f"# Archive of session {session.key}: {len(prefix)} messages, "
        f"{prefix[0].created_at.isoformat()} to {prefix[-1].created_at.isoformat()}\n\n"
    )
    answer = NO_LLM
    if llm_configured():
        limit = output_tokens(config.summary_max_tokens)
        answer = ask(
            _fitted_archive_prompt(prefix, config.summary_chunk_tokens, limit),
            timeout=call_seconds(config, trigger=trigger, deadline=deadline),
            schema=ARCHIVE_SCHEMA,
            schema_name="archive",
            max_tokens=limit,
        )
        text, tier = _archive_answer(answer)
        # A summary that only echoed the instructions gives way to the extractive lines.
        bare = archive_prompt(messages=[], budget_tokens=0)
        text, _ = Instructions.of(bare, [m.content for m in prefix]).clean(text)
        if text:
            return _Archive(head + text + "\n", answer, True, tier)
    # The salient sentences; a prefix of tool results and filler: each message's first one.
    lines = extractive_digest(messages=prefix, max_tokens=config.summary_chunk_tokens)
    lines = lines or extractive_lines(prefix)
    if len(lines) > EXTRACTIVE_MAX_LINES:
        half = EXTRACTIVE_MAX_LINES // 2
        lines = [*lines[:half], f"[… {len(lines) - 2 * half} lines …]", *lines[-half:]]
    return _Archive(head + "\n".join(lines) + "\n", answer, False)


def _fitted_archive_prompt(prefix: list[Message], chunk_tokens: int, limit: int) -> list:
    """The archive prompt with the transcript's middle elided to fit the model's context."""
    fixed = messages_tokens(archive_prompt(messages=[], budget_tokens=0))
    room = max(min(chunk_tokens, prompt_budget(limit) - fixed), 0)
    return archive_prompt(messages=prefix, budget_tokens=room)


def _archive_answer(answer: Answer) -> tuple[str, int | None]:
    """The archive summary in the answer and its parse tier: its JSON field, else a
    prompt-only server's prose (tier None)."""
    if not answer.ok:
        return "", None
    parsed = parse_llm_json_tiered(answer.text, ("summary",))
    value = parsed.value.get("summary") if parsed else None
    if parsed is not None and isinstance(value, str):
        return value.strip(), parsed.tier
    return ("", None) if parsed else (answer.text.strip(), None)


def _hot(
    session: Session, keep_last: int | None, trigger: str
) -> tuple[SessionMeta | None, list[Message], int | None]:
    """The session's meta, its hot messages in order, and where a compaction would cut
    them before any extraction is taken into account."""
    meta = conv.session_meta(session=session)
    hot = list(conv.hot_messages(session=session).order_by("created_at", "id").only(*TURN_FIELDS))
    return meta, hot, _cut(session, hot, keep_last, trigger)


def _extracted(hot: list[Message], meta: SessionMeta | None) -> int:
    """How many of the hot messages (in order) a flush has extracted: those at or before
    the flush cursor."""
    cursor = Cursor.read(meta, "flush_cursor")
    if cursor is None:
        return 0
    return sum(1 for m in hot if (m.created_at, m.id) <= (cursor.at, cursor.id))


def _within_extracted(hot: list[Message], cut: int, extracted: int) -> int | None:
    """`cut`, or the latest cut the boundaries allow within the extracted messages."""
    if cut <= extracted:
        return cut
    if extracted <= 0:
        return None
    turns = [boundaries.Turn.of(m) for m in hot]
    return boundaries.cut_keep_last(turns, keep=len(turns) - extracted)


def _plan(session: Session, keep_last: int | None, trigger: str) -> _Plan | Skip:
    """Where to cut the session's hot part, never past the flush cursor, or why not to."""
    meta, hot, cut = _hot(session, keep_last, trigger)
    if not cut:
        over = (
            keep_last is not None
            or trigger == Trigger.API
            or compaction_due(session=session, hot_bytes=sum(m.byte_size for m in hot))
        )
        return Skip("nothing_to_do" if not hot else "no_pair_boundary" if over else "under_limit")
    cut = _within_extracted(hot, cut, _extracted(hot, meta))
    if not cut:
        return Skip("not_extracted")
    ids = [m.pk for m in hot[:cut]]
    prefix = list(conv.session_messages(session=session).filter(pk__in=ids))
    start_at = meta.start_at if meta is not None else None
    return _Plan(WindowCut(prefix, cutoff_at=hot[cut].created_at, expected_start_at=start_at))


def _extract_first(
    session: Session, keep_last: int | None, trigger: str, deadline: float | None
) -> list[Run]:
    """Seed 001: extract the facts of what the compaction would archive that no flush has
    taken yet (EXTRACT runs; none when all of it is extracted)."""
    meta, hot, cut = _hot(session, keep_last, trigger)
    if not cut or cut <= _extracted(hot, meta):
        return []
    return session_flush(
        session=session,
        trigger=trigger,
        kind=RunKind.EXTRACT,
        through=hot[cut - 1],
        deadline=deadline,
    )


@dataclass(frozen=True)
class _Compaction(LifecycleStep[_Plan, _Archive]):
    """Seeds 000 and 003: the oldest part of the hot history into an archive entry."""

    keep_last: int | None = None
    already_applied: ClassVar[Skip | None] = Skip("already_applied")

    def plan(self) -> _Plan | Skip:
        return _plan(self.session, self.keep_last, self.log.trigger)

    def prepare(self, plan: _Plan) -> _Archive:
        return _archive_text(self.session, plan.messages, self.deadline, self.log.trigger)

    def write(self, plan: _Plan, made: _Archive, run: Run) -> dict:
        session, agent, prefix = self.session, self.session.agent, plan.cut.prefix
        name = archive_name_free(agent=agent, prefix=archive_prefix(session), owner=session.user)
        entry_archive_add(
            agent=agent,
            name=name,
            content=made.text,
            changed_by="compaction",
            detail=compaction_detail(session, len(prefix)),
            owner=session.user,
        )
        now = timezone.now()
        marker = compact_marker_add(
            session=session, cut=plan.cut, archive_name=name, archived_at=now
        )
        if marker is None:
            raise Superseded  # another compaction moved start_at first: undo the archive
        start_at = plan.cut.cutoff_at.isoformat()
        return {
            "archive_name": name,
            "marker_id": marker.pk,
            "start_at": start_at,
            "bytes": marker.bytes,
        }

    def superseded(self, record: Recorder) -> Skip:
        return Skip("superseded")


def session_compact(
    *, session: Session, trigger: str, keep_last: int | None = None, deadline: float | None = None
) -> list[Run]:
    """Compact the session if it is over max_history_bytes (always on demand, or keeping
    the last `keep_last` messages for a write-then-compact), extracting the facts of what
    it archives first. Returns the runs: extraction, then compaction."""
    runs = _extract_first(session, keep_last, trigger, deadline)
    log = RunLog(session.agent, session, RunKind.COMPACT, trigger)
    lease = LeaseTerms.of(log, f"compact:{session.pk}", deadline=deadline)
    return runs + run_once(_Compaction(log, deadline, keep_last=keep_last), lease)


def session_write_then_compact(
    *, session: Session, trigger: str, deadline: float | None = None
) -> list[Run]:
    """Seed 001 at compact_ratio: extract facts, store them, compact to the summary plus the
    last compact_keep_last messages (never past what was extracted), and fold what left
    into the rolling summary."""
    keep = session.agent.config.compact_keep_last
    hot = list(conv.hot_messages(session=session).order_by("created_at", "id").only(*TURN_FIELDS))
    if not boundaries.cut_keep_last([boundaries.Turn.of(m) for m in hot], keep=keep):
        return RunLog(session.agent, session, RunKind.COMPACT, trigger).skip(Skip("nothing_to_do"))
    runs = session_compact(session=session, trigger=trigger, keep_last=keep, deadline=deadline)
    runs += session_summarize(session=session, trigger=trigger, deadline=deadline)
    return runs


def compaction_due(*, session: Session, hot_bytes: int) -> bool:
    """Seed 000's trigger: the messages after start_at are over max_history_bytes."""
    return hot_bytes > session.agent.config.max_history_bytes
