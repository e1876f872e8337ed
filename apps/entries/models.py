from django.db import models
from django.utils import timezone

from apps.agents.models import Agent
from apps.agents.users import user_field
from apps.search.models import Embedded, pending_embedding_index


class Kind(models.TextChoices):
    NOTE = "note"
    ARCHIVE = "archive"


def unique_name_per_owner(name: str) -> models.UniqueConstraint:
    """Names (of entries and aliases alike) are unique per agent and owner: each owner has
    its own namespace (issue 26)."""
    return models.UniqueConstraint(fields=["agent", "user", "name"], name=name)


class Entry(Embedded):
    """A named text in an agent's memory (seed 003); workspace documents are Note entries.
    Indexed entries are embedded (the entries corpus): their content, or the texts at
    `index_fields` of a JSON object.

    The id is the monotonic insert order. `name` is unique per agent, and no alias of the
    agent's entries may equal it (enforced by services.py under a per-agent lock).
    """

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="entries")
    name = models.CharField(max_length=255)
    user = user_field()  # "" for the agent's own entry; a user's MEMORY.md sits beside it
    content = models.TextField(blank=True, default="")
    # count_tokens(content), set by every content write so get_context need not re-tokenise.
    # Nullable (None: not counted, get_context counts) so adding it is an ALTER TABLE ADD
    # COLUMN on SQLite: a table remake would drop the search triggers (apps/search/README.md).
    token_count = models.PositiveIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.NOTE)
    # Set when MEMORY.md grows past max_memory_bytes; consolidation compresses and clears it.
    needs_compression = models.BooleanField(default=False)
    # True when a client wrote it with `index: false`: left out of every search (still read
    # by name, listed and exported); None otherwise. Nullable so adding it is an ALTER TABLE
    # ADD COLUMN on SQLite, which keeps the search triggers (a table remake drops them).
    unindexed = models.BooleanField(null=True, blank=True)
    # The JSON paths whose texts are embedded (LangGraph's index fields, "$" the whole value)
    # when the content is a JSON object; None: the content itself.
    index_fields = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "entries"
        indexes = [pending_embedding_index("entry_pending_embedding")]
        constraints = [
            unique_name_per_owner("entry_unique_name_per_owner"),
            models.CheckConstraint(
                condition=models.Q(kind__in=["note", "archive"]), name="entry_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class EntryAlias(models.Model):
    """Another name that resolves to an entry; aliases add no search tokens (seed 003)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="aliases")
    user = user_field()  # the entry's
    name = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "entry aliases"
        constraints = [unique_name_per_owner("entry_alias_unique_per_owner")]

    def __str__(self) -> str:
        return f"{self.name} -> {self.entry_id}"


class Action(models.TextChoices):
    ADD = "add"
    WRITE = "write"
    RENAME = "rename"
    ALIAS = "alias"
    REMOVE = "remove"
    IMPORT = "import"


class EntryChange(models.Model):
    """One change of an entry and who made it. A write or a removal keeps the content the
    entry had before (its earlier version), so neither loses anything; the row outlives the
    entry. Daily-log appends are not recorded: the log is its own history."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    entry = models.ForeignKey(
        Entry, on_delete=models.SET_NULL, null=True, blank=True, related_name="changes"
    )
    entry_name = models.CharField(max_length=255)
    user = user_field()  # the entry's: a user's erasure takes its previous contents too
    kind = models.CharField(max_length=16, choices=Kind.choices)
    action = models.CharField(max_length=16, choices=Action.choices)
    previous_content = models.TextField(blank=True, default="")
    detail = models.CharField(max_length=500, blank=True, default="")
    # "agent" (API key), "admin:<username>", "consolidation", "flush", "compaction", ...
    changed_by = models.CharField(max_length=150)
    changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["entry", "id"], name="entry_change_entry")]

    def __str__(self) -> str:
        return f"{self.entry_name} {self.action} by {self.changed_by}"
