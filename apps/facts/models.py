from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.agents.models import Agent
from apps.agents.users import user_field
from apps.search.models import Embedded, TokenStates, pending_embedding_index, token_owner

GENERAL = "general"


class Source(models.TextChoices):
    AGENT = "agent"
    USER = "user"


class FactStatus(models.TextChoices):
    ACTIVE = "active"
    PENDING = "pending"  # waits for review: not recalled, not in get_context, until approved


class Category(Embedded):
    """A group of facts with an embedding of its name (seed 001's categories + categories_vec)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="fact_categories")
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "categories"
        constraints = [
            models.UniqueConstraint(fields=["agent", "name"], name="category_unique_per_agent")
        ]

    def __str__(self) -> str:
        return self.name


class FactQuerySet(models.QuerySet):
    def current(self) -> "FactQuerySet":
        """Facts not superseded (valid_to is unset)."""
        return self.filter(valid_to__isnull=True)

    def usable(self) -> "FactQuerySet":
        """Current facts that recall, memory_search and get_context may return (approved)."""
        return self.current().filter(status=FactStatus.ACTIVE)


class Fact(Embedded):
    """Something an agent deliberately remembers (seeds 001, 002), with salience and history.

    `key` is unique per agent and category among current facts; a superseded fact keeps its
    key, value and versions, and points at its successor.
    """

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="facts")
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="facts")
    key = models.CharField(max_length=200)
    user = user_field()  # "" for the agent's own fact
    value = models.TextField()
    # SHA-256 of the lower-cased, punctuation- and space-collapsed value: the exact-dedup key.
    normalized = models.CharField(max_length=64, db_index=False)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.AGENT)
    status = models.CharField(max_length=16, choices=FactStatus.choices, default=FactStatus.ACTIVE)
    importance = models.FloatField(default=0.5)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    # Cached salience; exact at every write/recall, refreshed for decay by a beat task.
    salience = models.FloatField(default=0.0)
    # By name, not by import: domain apps do not import each other (docs/architecture.md).
    session = models.ForeignKey(
        "conversations.Session", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="supersedes"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = FactQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "user", "category", "key"],
                condition=Q(valid_to__isnull=True),
                name="fact_unique_current_key",
            ),
            models.CheckConstraint(
                condition=Q(importance__gte=0.0, importance__lte=1.0),
                name="fact_importance_range",
            ),
            models.CheckConstraint(condition=Q(source__in=["agent", "user"]), name="fact_source"),
        ]
        indexes = [
            models.Index(fields=["agent", "category", "normalized"], name="fact_normalized"),
            models.Index(fields=["agent", "-salience"], name="fact_salience"),
            pending_embedding_index("fact_pending_embedding"),
        ]

    def __str__(self) -> str:
        return f"{self.category_id}/{self.key}"


class FactTokens(TokenStates):
    """A fact version's token states (apps/search/models.py), for reranking in memory search.
    Deleted with its fact."""

    fact = token_owner(Fact)

    class Meta:
        verbose_name_plural = "fact tokens"


class FactVersion(models.Model):
    """One change of a fact: the value before and after, who changed it, when and why."""

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    old_value = models.TextField(blank=True, default="")
    new_value = models.TextField(blank=True, default="")
    changed_by = models.CharField(max_length=100)
    reason = models.CharField(max_length=500, blank=True, default="")
    changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["fact", "number"]
        constraints = [
            models.UniqueConstraint(fields=["fact", "number"], name="fact_version_unique_number")
        ]

    def __str__(self) -> str:
        return f"{self.fact_id} v{self.number}"
