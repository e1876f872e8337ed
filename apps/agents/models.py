from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from apps.agents.config import AgentConfig, build_config, validate_ceilings, validate_overrides
from apps.agents.keyscope import KeyScope
from apps.agents.users import user_field
from apps.core.errors import InvalidInput

# A team's AGENTS.md goes into every one of its agents' prompts: kept to a document's size.
TEAM_AGENTS_MD_MAX_BYTES = 64 * 1024
# Its name in an agent's system prompt and workspace export (no entry may take it).
TEAM_AGENTS_MD_NAME = "team/AGENTS.md"


class Team(models.Model):
    """Humans who review the memory of a group of agents."""

    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams", blank=True
    )
    # Admin-set ceilings of the limits that protect the service (config.CEILING_KEYS):
    # setting -> ceiling. Only those below the global maximum are stored.
    ceilings = models.JSONField(default=dict, blank=True)
    # Seed 001's AGENTS.md, "fleet-wide agent descriptions": one per team, shared by all its
    # agents (get_context puts it before an agent's own AGENTS.md). Edited in the admin.
    agents_md = models.TextField(
        "AGENTS.md",
        blank=True,
        default="",
        help_text="Markdown shared by every agent of the team, in each one's system prompt "
        "before the agent's own AGENTS.md. Agents read it, they cannot change it.",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        try:
            validate_ceilings(self.ceilings)
        except InvalidInput as exc:
            raise ValidationError({"ceilings": exc.message}) from exc
        size = len(self.agents_md.encode("utf-8"))
        if size > TEAM_AGENTS_MD_MAX_BYTES:
            raise ValidationError(
                {"agents_md": f"AGENTS.md is {size} bytes; the limit is {TEAM_AGENTS_MD_MAX_BYTES}"}
            )


class MemberRole(models.TextChoices):
    VIEWER = "viewer"  # reads the review pages
    EDITOR = "editor"  # also curates: edits, approves, deletes, retries


class Membership(models.Model):
    """A user's place in a team: the review pages and the admin show that team's agents."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=MemberRole.choices, default=MemberRole.VIEWER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["team", "user"]
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="membership_unique"),
            models.CheckConstraint(
                condition=models.Q(role__in=["viewer", "editor"]), name="membership_role"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


class Agent(models.Model):
    """An LLM agent; every stored object is scoped to exactly one agent."""

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="agents")
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    # Only the overrides of AgentConfig's defaults are stored.
    settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        # The admin edits the overrides as JSON: the same rules as PATCH /agent/settings.
        if not isinstance(self.settings, dict):
            raise ValidationError({"settings": "settings must be an object of setting: value"})
        ceilings = self.team.ceilings if self.team_id else None
        try:
            validate_overrides(self.settings, ceilings)
        except InvalidInput as exc:
            raise ValidationError({"settings": exc.message}) from exc

    @property
    def config(self) -> AgentConfig:
        """The effective settings: overrides, clamped to the team's ceilings (load the team
        with the agent, select_related("team"), to spare a query)."""
        return build_config(self.settings, self.team.ceilings)


class ApiKeyQuerySet(models.QuerySet):
    def active(self) -> "ApiKeyQuerySet":
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """A bearer key for one agent. Only the SHA-256 of the key is stored."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    hashed_key = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Its scope (issue 39): the one end user it acts for ("" = any), and read-only.
    user = user_field()
    read_only = models.BooleanField(default=False)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.agent.slug})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def scope(self) -> KeyScope:
        return KeyScope(user=self.user or None, read_only=self.read_only)


class AuditEvent(models.Model):
    """A change a person made from a review page or the admin, or an end user's erasure
    (also by API key or command): who, what, when, and the object before and after (JSON).
    Kept when the user goes; removed with the agent."""

    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, null=True, blank=True, related_name="audit_events"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    username = models.CharField(max_length=150)
    source = models.CharField(max_length=16)  # "review", "admin"; "api" or "cli" for an erasure
    action = models.CharField(max_length=64)  # e.g. fact.approve, learning.update
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64, blank=True, default="")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["agent", "-created_at", "-id"], name="audit_agent_time")]

    def __str__(self) -> str:
        return f"{self.username} {self.action} {self.object_type}#{self.object_id}"
