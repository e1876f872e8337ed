"""Seed 000's cross-session error memory and seed 001's learnings."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.agents.models import Agent
from apps.agents.users import user_field
from apps.search.models import Embedded, pending_embedding_index


class Outcome(models.TextChoices):
    OPEN = "open"
    RESOLVED = "resolved"
    FAILED = "failed"
    ABANDONED = "abandoned"


class ErrorRecordQuerySet(models.QuerySet):
    def live(self) -> "ErrorRecordQuerySet":
        """Records not past their expiry (the beat deletes the others)."""
        return self.filter(expires_at__gt=timezone.now())


class ErrorRecord(Embedded):
    """A tool failure, what was tried and how it ended (seed 000's error_memory).

    Cross-session: a session's reset or removal leaves it. It lives error_memory_ttl_days
    (90) after its last hit; every hit (search, hint, get_context) pushes expires_at ahead.
    """

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="error_records")
    # By name: domain apps do not import each other (docs/architecture.md).
    session = models.ForeignKey(
        "conversations.Session", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The user whose session it was first recorded from ("" the agent's, or unknown). Not
    # an owner: every user reads the record, de-identified (ErrorDetail holds each user's
    # raw text). Never shown.
    origin_user = user_field()
    tool_name = models.CharField(max_length=200)
    error = models.TextField()
    # SHA-256 of the error text normalised (case, numbers, ids, spacing): the dedup key.
    normalized = models.CharField(max_length=64)
    arguments = models.JSONField(default=dict, blank=True)
    context = models.JSONField(default=dict, blank=True)
    strategy = models.TextField(blank=True, default="")
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.OPEN)
    resolution = models.TextField(blank=True, default="")
    hit_count = models.PositiveIntegerField(default=0)
    last_hit_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = ErrorRecordQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(outcome__in=["open", "resolved", "failed", "abandoned"]),
                name="error_record_outcome",
            )
        ]
        indexes = [
            models.Index(fields=["agent", "tool_name", "normalized"], name="error_record_dedup"),
            models.Index(fields=["agent", "-created_at", "-id"], name="error_record_agent_time"),
            models.Index(fields=["expires_at"], name="error_record_expiry"),
            pending_embedding_index("error_record_pending_embedding"),
        ]

    def __str__(self) -> str:
        return f"{self.tool_name}: {self.error[:60]}"


class LearningKind(models.TextChoices):
    ERROR = "error"  # learnings/errors.md: tool failures with their context
    CORRECTION = "correction"  # learnings/corrections.md: user corrections and preferences


class LearningSource(models.TextChoices):
    AGENT = "agent"
    USER = "user"
    CONSOLIDATION = "consolidation"
    ADMIN = "admin"
    CAPTURE = "capture"  # a failing tool message (`is_error`), captured at append time


class LearningStatus(models.TextChoices):
    ACTIVE = "active"  # injected into get_context's system part
    PENDING = "pending"  # proposed (by consolidation): waits for an admin or the agent
    ARCHIVED = "archived"


class Learning(models.Model):
    """Seed 001's self-improvement layer: an error or a correction the agent should keep."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="learnings")
    kind = models.CharField(max_length=16, choices=LearningKind.choices)
    user = user_field()  # a correction from a user's session is theirs; errors are the agent's
    # An error learning: the user whose session it was first captured or written in ("" the
    # agent's); its content is de-identified, their raw text is an ErrorDetail. Never shown.
    origin_user = user_field()
    content = models.TextField()
    source = models.CharField(
        max_length=16, choices=LearningSource.choices, default=LearningSource.AGENT
    )
    status = models.CharField(
        max_length=16, choices=LearningStatus.choices, default=LearningStatus.ACTIVE
    )
    session = models.ForeignKey(
        "conversations.Session", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    session_key = models.CharField(max_length=200, blank=True, default="")
    # The error record it was promoted from, while that record lives.
    error_record = models.ForeignKey(
        ErrorRecord, on_delete=models.SET_NULL, null=True, blank=True, related_name="learnings"
    )
    # A captured failure (source "capture"): SHA-256 of its tool and normalised error, so the
    # same failure again touches this learning (seen_count, last_seen_at) instead of adding
    # one. Empty for every other learning. Error records expire; this dedup does not.
    dedup_key = models.CharField(max_length=64, blank=True, default="")
    seen_count = models.PositiveIntegerField(default=1)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["error", "correction"]), name="learning_kind"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["active", "pending", "archived"]), name="learning_status"
            ),
            models.UniqueConstraint(
                fields=["agent", "dedup_key"],
                condition=~Q(dedup_key=""),
                name="learning_capture_dedup",
            ),
        ]
        indexes = [models.Index(fields=["agent", "status", "kind"], name="learning_agent_status")]

    def __str__(self) -> str:
        return f"{self.kind}: {self.content[:60]}"


class ErrorDetail(models.Model):
    """One user's raw text of a failure whose shared row (an ErrorRecord or an error
    Learning, exactly one) is de-identified: shown to that user's own reads only (issue 39).
    One per row and user, the latest occurrence; deleted with its row or the user."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    record = models.ForeignKey(
        ErrorRecord, on_delete=models.CASCADE, null=True, blank=True, related_name="details"
    )
    learning = models.ForeignKey(
        Learning, on_delete=models.CASCADE, null=True, blank=True, related_name="details"
    )
    user = models.CharField(max_length=200)
    session = models.ForeignKey(
        "conversations.Session", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    session_key = models.CharField(max_length=200, blank=True, default="")
    # A record's raw fields; a learning's raw text is `content`.
    error = models.TextField(blank=True, default="")
    arguments = models.JSONField(default=dict, blank=True)
    context = models.JSONField(default=dict, blank=True)
    request = models.TextField(blank=True, default="")  # the user's message before the call
    strategy = models.TextField(blank=True, default="")
    resolution = models.TextField(blank=True, default="")
    content = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(record__isnull=False, learning__isnull=True)
                | Q(record__isnull=True, learning__isnull=False),
                name="error_detail_one_row",
            ),
            models.CheckConstraint(condition=~Q(user=""), name="error_detail_user"),
            models.UniqueConstraint(
                fields=["record", "user"],
                condition=Q(record__isnull=False),
                name="error_detail_record_user",
            ),
            models.UniqueConstraint(
                fields=["learning", "user"],
                condition=Q(learning__isnull=False),
                name="error_detail_learning_user",
            ),
        ]
        indexes = [models.Index(fields=["agent", "user"], name="error_detail_agent_user")]

    def __str__(self) -> str:
        return f"{self.user}: {(self.error or self.content)[:60]}"
