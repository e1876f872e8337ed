"""Searchable corpora: which model, which text fields, which vector field, which agent FK.

Apps register their corpora in `AppConfig.ready()`; the search backends read them from here.
See apps/search/README.md for registering a corpus and creating its indexes in a migration.
"""

from dataclasses import dataclass

from django.db import models


@dataclass(frozen=True)
class Corpus:
    """One searchable model.

    `text_fields` are indexed together for BM25 (their tokens form one document);
    `vector_field` is a VectorField (or None for keyword-only corpora); `model_field`, when
    set, names the CharField holding the embedder name, so vector search only compares
    vectors of the current model; `agent_field` is the FK that scopes every search.
    """

    name: str
    model: type[models.Model]
    text_fields: tuple[str, ...]
    vector_field: str | None = None
    model_field: str | None = None
    agent_field: str = "agent"

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    @property
    def pk_column(self) -> str:
        return self.model._meta.pk.column

    @property
    def agent_column(self) -> str:
        return self.model._meta.get_field(self.agent_field).column

    def column(self, field: str) -> str:
        return self.model._meta.get_field(field).column


def vector_label(embedder: object) -> str:
    """What is stored beside each vector (e.g. Message.embedding_model): "name@dims".

    Vector search compares only vectors with the current embedder's label.
    """
    return f"{embedder.name}@{embedder.dimensions}"


_registry: dict[str, Corpus] = {}


def register(corpus: Corpus) -> Corpus:
    """Add a corpus (idempotent for the same definition); raises ValueError on a clash."""
    existing = _registry.get(corpus.name)
    if existing is not None and existing != corpus:
        raise ValueError(f"corpus {corpus.name!r} is already registered differently")
    _registry[corpus.name] = corpus
    return corpus


def get_corpus(name: str) -> Corpus:
    """The registered corpus; KeyError names the unknown corpus."""
    try:
        return _registry[name]
    except KeyError:
        raise KeyError(f"no search corpus {name!r}; registered: {sorted(_registry)}") from None


def all_corpora() -> list[Corpus]:
    return list(_registry.values())
