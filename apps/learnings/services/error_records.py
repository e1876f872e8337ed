"""Seed 000's error memory: capture, record, update, refresh on hit, expire.

A record lives error_memory_ttl_days (90) after its last hit: creation, a dedup match, a
search hit, a hint or get_context all push expires_at to now plus the TTL ("refresh on
hit"); the beat deletes what is past it.
"""

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TypedDict

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from pydantic import JsonValue

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.core.errors import InvalidInput, NotFound, PayloadTooLarge
from apps.core.validation import check_json_limits, check_parsed, clean_text
from apps.learnings.models import ErrorRecord, Outcome
from apps.learnings.services.error_details import Origin, RawText, detail_keep, detail_update
from apps.search.embedding_queue import schedule_embedding

AGENT_ORIGIN = Origin()  # the agent's own failure: pattern rules only, no detail
MAX_TOOL_CHARS = 200
MAX_TEXT_BYTES = 64 * 1024  # an error, strategy or resolution
# Numbers, hex and ids differ between two occurrences of one error: they do not count.
_VOLATILE = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|0x[0-9a-f]+|\d+"
)


def normalize_error(text: str) -> str:
    """Case-folded, NFKC, numbers and ids replaced by '#', whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_VOLATILE.sub("#", folded).split())[:4000]


def error_key(text: str) -> str:
    return hashlib.sha256(normalize_error(text).encode("utf-8")).hexdigest()


def expiry(agent: Agent, now: datetime) -> datetime:
    return now + timedelta(days=agent.config.error_memory_ttl_days)


def clean_json(value: object, *, loc: list[str | int]) -> dict[str, JsonValue]:
    """A JSON object within the free-form limits (check_json_limits) that PostgreSQL can
    store (check_parsed: no NUL, lone surrogate or non-finite number); InvalidInput or
    PayloadTooLarge naming `loc` otherwise."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput("must be a JSON object", loc=loc)
    try:
        check_json_limits(value, loc=loc)
    except TypeError as exc:  # a value json.dumps cannot write (a set, a datetime)
        raise InvalidInput(f"is not plain JSON: {exc}", loc=loc) from exc
    check_parsed(value, loc=loc)
    return value


def _captured_json(value: object) -> dict[str, JsonValue]:
    """`value` if clean_json accepts it, else a note of what was dropped (capture must not
    fail an append that is already stored)."""
    try:
        return clean_json(value, loc=[])
    except (InvalidInput, PayloadTooLarge) as exc:
        return {"dropped": exc.message}


def _text(value: object, field: str, *, required: bool = False) -> str:
    """An error, strategy or resolution: text under the body's `field`."""
    return clean_text(
        value, label=field, loc=["body", field], required=required, max_bytes=MAX_TEXT_BYTES
    )


def clean_tool(value: object, *, loc: list[str | int]) -> str:
    return clean_text(
        value,
        label="tool_name",
        loc=loc,
        required=True,
        max_bytes=MAX_TOOL_CHARS * 4,
        max_chars=MAX_TOOL_CHARS,
    )


def clean_outcome(value: object, *, loc: list[str | int]) -> str:
    if value not in Outcome.values:
        raise InvalidInput(f"must be one of {', '.join(Outcome.values)}", loc=loc)
    return str(value)


def _hit(record: ErrorRecord, agent: Agent, now: datetime) -> ErrorRecord:
    ErrorRecord.objects.filter(pk=record.pk).update(
        hit_count=F("hit_count") + 1, last_hit_at=now, expires_at=expiry(agent, now)
    )
    record.refresh_from_db(fields=["hit_count", "last_hit_at", "expires_at"])
    return record


def _insert(agent: Agent, now: datetime, **fields: object) -> ErrorRecord:
    """A new record living a TTL from now, embedded after commit."""
    record = ErrorRecord.objects.create(
        agent=agent, expires_at=expiry(agent, now), created_at=now, updated_at=now, **fields
    )
    schedule_embedding(corpus="errors", agent_id=agent.pk)
    return record


class _Shared(TypedDict):
    """An error record's fields as every reader sees them (de-identified)."""

    tool_name: str
    error: str
    strategy: str
    resolution: str
    arguments: dict[str, JsonValue]
    context: dict[str, JsonValue]
    normalized: str
    outcome: str


def _remember(agent: Agent, fields: _Shared, origin: Origin) -> tuple[ErrorRecord, bool]:
    """Insert the record, or update and hit the live one with its tool, error and strategy:
    (record, created). `fields` are the shared (de-identified) ones."""
    with transaction.atomic():
        lock_agent(agent)
        now = timezone.now()
        same = (
            ErrorRecord.objects.live()
            .filter(
                agent=agent,
                tool_name=fields["tool_name"],
                normalized=fields["normalized"],
                strategy=fields["strategy"],
            )
            .first()
        )
        if same is not None:
            if fields["outcome"] != Outcome.OPEN or fields["resolution"]:
                same.outcome = fields["outcome"]
                same.resolution = fields["resolution"] or same.resolution
                same.updated_at = now
                same.save(update_fields=["outcome", "resolution", "updated_at"])
            return _hit(same, agent, now), False
        record = _insert(
            agent, now, session_id=origin.session_id, origin_user=origin.user, **fields
        )
        return record, True


def error_record_create(
    *,
    agent: Agent,
    tool_name: str,
    error: str,
    arguments: dict[str, JsonValue] | None = None,
    context: dict[str, JsonValue] | None = None,
    strategy: str = "",
    outcome: str = Outcome.OPEN,
    resolution: str = "",
    origin: Origin = AGENT_ORIGIN,
) -> tuple[ErrorRecord, bool]:
    """Record what was tried against an error and how it ended, de-identified (the raw
    text is the origin user's ErrorDetail). The same tool, error and strategy again (once
    de-identified) is one record: its outcome and resolution are updated and it counts a
    hit. Returns (record, created); InvalidInput or PayloadTooLarge name a bad field."""
    raw: RawText = {
        "error": _text(error, "error", required=True),
        "strategy": _text(strategy, "strategy"),
        "resolution": _text(resolution, "resolution"),
        "arguments": clean_json(arguments, loc=["body", "arguments"]),
        "context": clean_json(context, loc=["body", "context"]),
    }
    scrub = origin.scrubber
    shared_error = scrub.text(raw["error"])
    fields: _Shared = {
        "tool_name": clean_tool(tool_name, loc=["body", "tool_name"]),
        "error": shared_error,
        "strategy": scrub.text(raw["strategy"]),
        "resolution": scrub.text(raw["resolution"]),
        "arguments": scrub.value(raw["arguments"]),
        "context": scrub.value(raw["context"]),
        "normalized": error_key(shared_error),
        "outcome": clean_outcome(outcome, loc=["body", "outcome"]),
    }
    with transaction.atomic():
        record, created = _remember(agent, fields, origin)
        detail_keep(agent=agent, origin=origin, record=record, **raw)
    return record, created


def error_capture(
    *,
    agent: Agent,
    tool_name: str,
    error: str,
    arguments: object = None,
    context: object = None,
    request: str = "",
    origin: Origin = AGENT_ORIGIN,
) -> tuple[ErrorRecord, bool]:
    """A failing tool message (`is_error: true`): an open record, de-identified, unless one
    of this tool with the same normalised de-identified error exists, which then counts a
    hit; the origin user's raw text (with their `request`) is kept for them. (record,
    created)."""
    scrub = origin.scrubber
    arguments, context = _captured_json(arguments), _captured_json(context)
    shared_error = scrub.text(error)
    key = error_key(shared_error)
    with transaction.atomic():
        lock_agent(agent)
        now = timezone.now()
        record = (
            ErrorRecord.objects.live()
            .filter(agent=agent, tool_name=tool_name, normalized=key)
            .order_by("-last_hit_at", "-created_at")
            .first()
        )
        created = record is None
        if record is not None:
            _hit(record, agent, now)
        else:
            record = _insert(
                agent,
                now,
                session_id=origin.session_id,
                origin_user=origin.user,
                tool_name=tool_name[:MAX_TOOL_CHARS],
                error=shared_error,
                normalized=key,
                arguments=scrub.value(arguments),
                context=scrub.value(context),
            )
        raw: RawText = {
            "error": error,
            "arguments": arguments,
            "context": context,
            "request": request,
        }
        detail_keep(agent=agent, origin=origin, record=record, **raw)
    return record, created


def error_record_update(
    *,
    record: ErrorRecord,
    outcome: str | None = None,
    strategy: str | None = None,
    resolution: str | None = None,
    origin: Origin = AGENT_ORIGIN,
) -> ErrorRecord:
    """Record how an attempt ended (seed 000: resolved, failed or abandoned). The strategy
    and resolution are stored de-identified; the origin user's detail of the record, if
    they have one, keeps them as given. Returns the shared (de-identified) row."""
    fields, raw = ["updated_at"], {}
    if outcome is not None:
        record.outcome = clean_outcome(outcome, loc=["body", "outcome"])
        fields.append("outcome")
    if strategy is not None:
        raw["strategy"] = _text(strategy, "strategy")
    if resolution is not None:
        raw["resolution"] = _text(resolution, "resolution")
    for name, value in raw.items():
        setattr(record, name, origin.scrubber.text(value))
        fields.append(name)
    record.updated_at = timezone.now()
    with transaction.atomic():
        if not ErrorRecord.objects.filter(pk=record.pk).exists():
            raise NotFound("error record not found", loc=["path", "error_id"])
        record.save(update_fields=fields)
        detail_update(record=record, user=origin.user, **raw)
    return record


def error_record_delete(*, record: ErrorRecord) -> None:
    ErrorRecord.objects.filter(pk=record.pk).delete()


def errors_touch(*, agent: Agent, ids: Sequence[int]) -> int:
    """Seed 000's refresh on hit: each record found counts a hit and lives another TTL."""
    if not ids:
        return 0
    now = timezone.now()
    return ErrorRecord.objects.filter(agent=agent, pk__in=list(ids)).update(
        hit_count=F("hit_count") + 1, last_hit_at=now, expires_at=expiry(agent, now)
    )


def errors_extend(*, records: Sequence[ErrorRecord]) -> int:
    """Give each record a fresh TTL from now (the admin's "extend"), each by its agent's."""
    now = timezone.now()
    done = 0
    for record in records:
        done += ErrorRecord.objects.filter(pk=record.pk).update(
            expires_at=expiry(record.agent, now)
        )
    return done


def error_record_expire(*, record: ErrorRecord) -> ErrorRecord:
    """Expire a record now (the review page's "expire"): no longer served (hints, search,
    get_context read live records only), deleted by the next errors_expire sweep."""
    now = timezone.now()
    if not ErrorRecord.objects.filter(pk=record.pk).update(expires_at=now, updated_at=now):
        raise NotFound("error record not found", loc=["path", "error_id"])
    record.expires_at, record.updated_at = now, now
    return record


def errors_expire(*, now: datetime | None = None) -> int:
    """Delete every record past its expiry; returns how many."""
    deleted, _ = ErrorRecord.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
