"""The abstract models a corpus's rows build on: the embedding columns the pipeline writes
(`Embedded`), and the token states kept for reranking (`TokenStates`; each corpus that keeps
them subclasses it with its one-to-one `owner` key; docs/search.md, "Reranking")."""

from django.db import models
from django.db.models import Q

from apps.core.fields import VectorField
from apps.providers.embeddings import EMBEDDING_DIMENSIONS


class Embedded(models.Model):
    """A row of a corpus with vectors: the four columns `Corpus` names by default
    (vector_field, model_field, error_field, attempts_field). Each subclass keeps its own
    partial "pending embedding" index (Q(embedding__isnull=True)) in its Meta."""

    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True, default="")
    embedding_error = models.TextField(blank=True, default="")
    embedding_attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        abstract = True


def pending_embedding_index(name: str, fields: tuple[str, ...] = ("agent", "id")) -> models.Index:
    """The partial index the embedding sweep and backlog counts read: rows with no vector."""
    return models.Index(fields=list(fields), condition=Q(embedding__isnull=True), name=name)


class TokenStates(models.Model):
    """One row's token states, kept when it is embedded, for reranking without a model run:
    one int8 row of the embedder's token space per kept token. Subclasses add the owner key,
    `token_owner(TheModel)`."""

    # The embedder's token space ("model/projection@int8"): states of another are stale.
    space = models.CharField(max_length=100)
    count = models.PositiveSmallIntegerField()  # tokens (rows of codes)
    codes = models.BinaryField()  # count x dims int8, row-major

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"tokens {self.pk}"  # the owner's id: the owner key is the primary key


def token_owner(model: type[models.Model]) -> models.OneToOneField:
    """The owner key of a TokenStates subclass: its primary key, deleted with the row."""
    return models.OneToOneField(
        model, primary_key=True, on_delete=models.CASCADE, related_name="token_states"
    )
