import uuid

from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.agents.models import Agent
from apps.agents.users import user_field
from apps.search.models import Embedded, TokenStates, pending_embedding_index, token_owner


class Session(models.Model):
    """One conversation of an agent, addressed by its id or by the agent's own key."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="sessions")
    key = models.CharField(max_length=200)
    # The end user the agent talks to here ("" for none), set at creation: what the
    # lifecycle and the memory tools write from this session is theirs (apps/agents/users.py).
    user = user_field()
    title = models.CharField(max_length=500, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "key"], name="session_unique_key_per_agent")
        ]
        indexes = [
            models.Index(fields=["agent", "created_at", "id"], name="session_agent_created"),
            models.Index(fields=["agent", "user"], name="session_agent_user"),
        ]

    def __str__(self) -> str:
        return self.key


class SessionMeta(models.Model):
    """Per-session bookkeeping (seed 000's session_meta); cleared on reset."""

    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="meta")
    # Compaction cutoff: messages created before it are archive, not hot window.
    start_at = models.DateTimeField(null=True, blank=True)
    # Rolling-summary cursor: the newest message (time, id) already folded into the summary.
    summary_cursor = models.DateTimeField(null=True, blank=True)
    summary_cursor_id = models.UUIDField(null=True, blank=True)
    # Flush cursor: the newest message whose facts a flush has extracted (seed 001).
    flush_cursor = models.DateTimeField(null=True, blank=True)
    flush_cursor_id = models.UUIDField(null=True, blank=True)
    # Bytes of the messages at or after start_at, kept by every append and compaction, so
    # the compaction check (seed 000's 5 MiB) reads one row instead of summing the session.
    hot_bytes = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"meta {self.session_id}"


class Summary(models.Model):
    """The rolling summary of a session; survives reset, removed with the session."""

    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="summary")
    content = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "summaries"

    def __str__(self) -> str:
        return f"summary {self.session_id}"


class CompactMarker(models.Model):
    """A compaction boundary in a session's history (seed 003): not a message, never counted,
    searched or sent to an LLM. The window replays from the latest one; cleared on reset."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="markers")
    archive_name = models.CharField(max_length=255)
    archived_at = models.DateTimeField(default=timezone.now)
    # The new start_at: messages before it went into the archive.
    cutoff_at = models.DateTimeField()
    first_message_at = models.DateTimeField()
    last_message_at = models.DateTimeField()
    message_count = models.PositiveIntegerField()
    bytes = models.BigIntegerField()

    class Meta:
        ordering = ["archived_at", "id"]

    def __str__(self) -> str:
        return f"marker {self.archive_name}"


class Consolidation(models.TextChoices):
    """How a message was consolidated (seed 004): by the LLM, or by a raw fallback."""

    OK = "ok"
    FALLBACK = "raw-fallback"


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class MessageQuerySet(models.QuerySet):
    def for_agent(self, agent: Agent) -> "MessageQuerySet":
        return self.filter(agent=agent)

    def pending_embedding(self) -> "MessageQuerySet":
        return self.filter(embedding__isnull=True)


class Message(Embedded):
    """One message of the full history (seed 002's schema). Never trimmed by compaction."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Denormalised from session so agent-wide search and scoping need no join.
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    name = models.CharField(max_length=200, blank=True, default="")
    content = models.TextField(blank=True, default="")
    tool_call_id = models.CharField(max_length=200, null=True, blank=True)
    tool_name = models.CharField(max_length=200, null=True, blank=True)
    tool_calls_json = models.JSONField(null=True, blank=True)
    # A failing tool call (`is_error: true`): True, else None. Nullable so adding it is an
    # ALTER TABLE ADD COLUMN on SQLite (a table remake would drop the search triggers).
    is_error = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    importance = models.FloatField(default=0.5)
    metadata = models.JSONField(default=dict, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    byte_size = models.PositiveIntegerField(default=0)
    consolidated_at = models.DateTimeField(null=True, blank=True)
    # Nullable so adding it is ALTER TABLE ADD COLUMN on SQLite (a table remake would drop
    # the search triggers); None until consolidated.
    consolidation = models.CharField(
        max_length=16, choices=Consolidation.choices, null=True, blank=True
    )
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="message_unique_idempotency_key",
            ),
            models.CheckConstraint(
                condition=Q(role__in=["user", "assistant", "tool", "system"]),
                name="message_role_valid",
            ),
            models.CheckConstraint(
                condition=Q(importance__gte=0.0, importance__lte=1.0),
                name="message_importance_range",
            ),
        ]
        indexes = [
            models.Index(fields=["session", "created_at", "id"], name="message_session_time"),
            models.Index(fields=["agent", "created_at"], name="message_agent_time"),
            pending_embedding_index("message_pending_embedding", ("agent", "embedding_attempts")),
            # The auto-consolidation check counts these on every append.
            models.Index(
                fields=["session", "created_at", "id"],
                condition=Q(consolidated_at__isnull=True),
                name="message_unconsolidated",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class MessageTokens(TokenStates):
    """A message's token states (apps/search/models.py). Deleted with its message."""

    message = token_owner(Message)

    class Meta:
        verbose_name_plural = "message tokens"
