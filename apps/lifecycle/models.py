"""The lifecycle's records: every LLM call and fallback (Run), seed 004's history entries,
and the leases that keep one agent's consolidations in sequence."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.agents.models import Agent
from apps.agents.users import user_field
from apps.search.models import Embedded, TokenStates, pending_embedding_index, token_owner


class RunKind(models.TextChoices):
    SUMMARY = "summary"
    CONSOLIDATE = "consolidate"
    COMPACT = "compact"
    FLUSH = "flush"
    EXTRACT = "extract"
    COMPRESS = "compress"  # seed 004: MEMORY.md over max_memory_bytes, compressed on its own


class Trigger(models.TextChoices):
    AUTO = "auto"
    BEAT = "beat"
    API = "api"
    RESET = "reset"
    CONTEXT = "context"
    REVIEW = "review"  # a person retried a run on the review pages


class RunStatus(models.TextChoices):
    OK = "ok"  # the LLM answered and the answer was applied
    FALLBACK = "fallback"  # an extractive or raw fallback was applied instead; `reason` says why
    FAILED = "failed"  # the LLM failed and nothing was written
    TIMEOUT = "timeout"  # the LLM did not answer in time and nothing was written
    SKIPPED = "skipped"  # nothing to do, or another run got there first


# Statuses that wrote something: a run with one of these holds its idempotency key.
APPLIED = (RunStatus.OK, RunStatus.FALLBACK)


class Run(models.Model):
    """One LLM call or fallback of the memory lifecycle, with what it cost and processed.

    `idempotency_key` hashes (agent, session, kind, message range): a retried task that
    finds an applied run with its key writes nothing (unique among applied runs).
    """

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="runs")
    # By name: lifecycle sits above conversations, and a removed session keeps its runs.
    session = models.ForeignKey(
        "conversations.Session", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    session_key = models.CharField(max_length=200, blank=True, default="")
    user = user_field()  # the session's user: its prompt and output hold their words
    kind = models.CharField(max_length=16, choices=RunKind.choices)
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    status = models.CharField(max_length=16, choices=RunStatus.choices)
    # Machine-readable why: not_configured, timeout, error, unparseable, nothing_to_do, ...
    reason = models.CharField(max_length=40, blank=True, default="")
    # Seed 004's JSON parse tier that read the answer (1, 2, 3); None: none did, or no JSON.
    parse_tier = models.PositiveSmallIntegerField(null=True, blank=True)
    # How the answer's shape was asked for (json_schema, json_object_schema, json_object,
    # prompt); blank when no model was called. Issue 23.
    structured_mode = models.CharField(max_length=24, blank=True, default="")
    # The answer was cut off at max_tokens (finish_reason "length") and read for what it held.
    truncated = models.BooleanField(default=False)
    model = models.CharField(max_length=200, blank=True, default="")
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    first_message_id = models.UUIDField(null=True, blank=True)
    last_message_id = models.UUIDField(null=True, blank=True)
    first_message_at = models.DateTimeField(null=True, blank=True)
    last_message_at = models.DateTimeField(null=True, blank=True)
    message_count = models.PositiveIntegerField(default=0)
    idempotency_key = models.CharField(max_length=64, blank=True, default="")
    # The model's raw answer (cut to 64 KiB), for review and debugging.
    output = models.TextField(blank=True, default="")
    # What the run wrote: archive name, history entry id, fact ids, memory_updated, ...
    details = models.JSONField(default=dict, blank=True)
    facts = models.ManyToManyField("facts.Fact", blank=True, related_name="runs")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "idempotency_key"],
                condition=Q(status__in=["ok", "fallback"]) & ~Q(idempotency_key=""),
                name="run_applied_once",
            ),
        ]
        indexes = [
            models.Index(fields=["agent", "-created_at", "-id"], name="run_agent_time"),
            models.Index(fields=["agent", "kind", "-created_at"], name="run_agent_kind"),
            models.Index(fields=["session", "-created_at"], name="run_session_time"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.status} ({self.trigger})"


class HistoryKind(models.TextChoices):
    OK = "ok"
    RAW_FALLBACK = "raw-fallback"


class HistoryEntry(Embedded):
    """One entry of seed 004's append-only history (HISTORY.md, HISTORY-YYYY-MM.md)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="history")
    session = models.ForeignKey(
        "conversations.Session", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    session_key = models.CharField(max_length=200, blank=True, default="")
    user = user_field()  # the session's user: "" for the agent's own history
    created_at = models.DateTimeField(default=timezone.now)
    content = models.TextField()
    kind = models.CharField(max_length=16, choices=HistoryKind.choices, default=HistoryKind.OK)
    run = models.ForeignKey(
        Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="history"
    )
    first_message_at = models.DateTimeField(null=True, blank=True)
    last_message_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "history entries"
        indexes = [
            models.Index(fields=["agent", "created_at", "id"], name="history_agent_time"),
            pending_embedding_index("history_pending_embedding"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.kind}"


class HistoryEntryTokens(TokenStates):
    """A history entry's token states (apps/search/models.py), for reranking in memory
    search. Deleted with its entry."""

    entry = token_owner(HistoryEntry)

    class Meta:
        verbose_name_plural = "history entry tokens"


class Lease(models.Model):
    """A named, expiring lock held across an LLM call (which no transaction may span).

    `consolidate:<agent>` keeps one agent's MEMORY.md writers in sequence (seed 004);
    `summary:<session>` and `compact:<session>` keep one run per session. A holder that
    dies leaves the lease to expire.
    """

    name = models.CharField(max_length=100, unique=True)
    token = models.CharField(max_length=32, blank=True, default="")
    until = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name
