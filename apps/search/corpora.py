"""The corpus registry: every searchable model is declared here once, by its own app.

A corpus says which text is indexed (BM25) and which is embedded, where the vector and its
bookkeeping live, which fields scope it (agent, session, kind), the order of its rows within
a session (for neighbours and context windows) and how a hit is rendered. The search layer
derives everything else from it: the legs, hybrid ranking, the one embedding pipeline with
its task, sweep and backlog counts, `manage.py reembed`, the admin and health figures.
Apps register in `AppConfig.ready()`; see apps/search/README.md. The search layer imports
no domain app.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import models

from apps.core.fields import VectorField
from apps.core.meta import field_column


@dataclass(frozen=True)
class Rendered:
    """A hit as people and agents see it: what it is, a title and its text."""

    kind: str  # e.g. message | fact | entry | document
    title: str
    text: str


@dataclass(frozen=True)
class TokenStore:
    """Where a corpus keeps its rows' token states (for reranking without a model run): a
    model with one row per corpus row, whose primary key `owner_field` is a one-to-one key to
    it with on_delete=CASCADE, so the states go when the row goes. `space_field` holds the
    embedder's token space label, `count_field` the number of tokens and `codes_field` their
    int8 codes (tokens x dims, row-major)."""

    model: type[models.Model]
    owner_field: str = "owner"
    space_field: str = "space"
    count_field: str = "count"
    codes_field: str = "codes"

    @property
    def related_name(self) -> str:
        """The reverse query name from the corpus model to this one."""
        owner = self.model._meta.get_field(self.owner_field)
        assert isinstance(owner, models.OneToOneField)  # _check_tokens checked it
        return owner.related_query_name()


@dataclass(frozen=True)
class Corpus:
    """One searchable model.

    `text_fields` form one BM25 document (empty: no keyword index). `embed` returns the text
    embedded for a row (None: no vectors); it may read only `embed_fields`, which the
    pipeline loads and re-checks before it writes a vector, so a row edited meanwhile keeps
    its new text's turn; `embed_where` narrows the rows embedded. The four `*_field` names
    hold the vector, its "name@dims" label, the last error and the attempt count (an
    embedding corpus defaults the first two to "embedding" and "embedding_model"). `tokens`
    (optional) stores each row's token states when the embedder keeps them; hybrid search
    reranks with them.
    """

    name: str
    model: type[models.Model]
    text_fields: tuple[str, ...] = ()
    embed: Callable[[models.Model], str] | None = None
    embed_fields: tuple[str, ...] = ()
    # The rows embedded (None: all); the others keep no vector and count in no backlog.
    embed_where: models.Q | None = None
    vector_field: str | None = None
    model_field: str | None = None
    # False: vectors are kept (and embedded) but compared in Python, with no ANN index.
    vector_index: bool = True
    error_field: str = "embedding_error"
    attempts_field: str = "embedding_attempts"
    agent_field: str = "agent"
    session_field: str | None = None
    kind_field: str | None = None
    # Row order within a session: neighbours and context windows follow it.
    order_fields: tuple[str, ...] = ("pk",)
    select_related: tuple[str, ...] = ()
    render: Callable[[models.Model], Rendered] | None = None
    tokens: TokenStore | None = None

    def __post_init__(self) -> None:
        # An embedding corpus keeps its vector and label in the usual columns unless it says
        # otherwise.
        if self.embed is not None:
            if self.vector_field is None:
                object.__setattr__(self, "vector_field", "embedding")
            if self.model_field is None:
                object.__setattr__(self, "model_field", "embedding_model")

    @property
    def embeds(self) -> bool:
        return self.embed is not None

    @property
    def vector_fields(self) -> tuple[str, str]:
        """The vector field and its label field (`model_field`), which __post_init__ sets for
        an embedding corpus; ValueError for a corpus without vectors."""
        if self.vector_field is None or self.model_field is None:
            raise ValueError(f"corpus {self.name!r} keeps no vectors")
        return self.vector_field, self.model_field

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    @property
    def pk_column(self) -> str:
        return field_column(self.model, "pk")

    @property
    def agent_column(self) -> str:
        return field_column(self.model, self.agent_field)

    def column(self, field: str) -> str:
        return field_column(self.model, field)

    def embeddable(self) -> models.QuerySet:
        """The rows the embedding pipeline embeds and counts (`embed_where`)."""
        qs = self.model._default_manager.all()
        return qs.filter(self.embed_where) if self.embed_where is not None else qs

    def hits_queryset(self) -> models.QuerySet:
        """Rows to show for hits: related rows joined, every vector left in the database
        (decoding 384 floats per row costs more than the query itself)."""
        qs = self.model._default_manager.all()
        deferred = _vector_fields(self.model)
        for relation in self.select_related:
            related = self.model._meta.get_field(relation).related_model
            assert related is not None  # select_related names relations
            deferred += [f"{relation}__{name}" for name in _vector_fields(related)]
        if self.select_related:
            qs = qs.select_related(*self.select_related)
        return qs.defer(*deferred) if deferred else qs

    def rendered(self, obj: models.Model) -> Rendered:
        if self.render is not None:
            return self.render(obj)
        text = " ".join(str(getattr(obj, f)) for f in self.text_fields)
        return Rendered(kind=self.name, title=str(obj), text=text)


def _vector_fields(model: type[models.Model]) -> list[str]:
    return [f.name for f in model._meta.concrete_fields if isinstance(f, VectorField)]


def _check(corpus: Corpus) -> None:
    """Every named field exists on the model; an embedding corpus has all four fields."""
    named = [
        *corpus.text_fields,
        *corpus.embed_fields,
        corpus.agent_field,
        *(f for f in corpus.order_fields if f != "pk"),
    ]
    if corpus.embeds:
        if not corpus.embed_fields:
            raise ImproperlyConfigured(f"corpus {corpus.name!r} embeds: it needs embed_fields")
        named += [f for f in (corpus.vector_field, corpus.model_field) if f]  # set: __post_init__
        named.append(corpus.error_field)
        named.append(corpus.attempts_field)
    named += [f for f in (corpus.session_field, corpus.kind_field) if f]
    for field in named:
        try:
            corpus.model._meta.get_field(field)
        except FieldDoesNotExist as exc:
            raise ImproperlyConfigured(f"corpus {corpus.name!r}: {exc}") from exc
    if corpus.tokens is not None:
        _check_tokens(corpus, corpus.tokens)


def _check_tokens(corpus: Corpus, store: TokenStore) -> None:
    """A token store needs vectors, and is keyed one-to-one by the corpus row, cascading."""
    where = f"corpus {corpus.name!r} token store {store.model._meta.label}"
    if not corpus.embeds:
        raise ImproperlyConfigured(f"{where}: only a corpus with vectors can keep token states")
    try:
        owner = store.model._meta.get_field(store.owner_field)
        for name in (store.space_field, store.count_field, store.codes_field):
            store.model._meta.get_field(name)
    except FieldDoesNotExist as exc:
        raise ImproperlyConfigured(f"{where}: {exc}") from exc
    if not (
        isinstance(owner, models.OneToOneField)
        and owner.primary_key
        and owner.related_model is corpus.model
        and owner.remote_field.on_delete is models.CASCADE
    ):
        raise ImproperlyConfigured(
            f"{where}: {store.owner_field} must be its primary key, a OneToOneField to "
            f"{corpus.model._meta.label} with on_delete=CASCADE"
        )


_registry: dict[str, Corpus] = {}


def register(corpus: Corpus) -> Corpus:
    """Add a corpus (idempotent for the same definition); ImproperlyConfigured on a clash."""
    _check(corpus)
    existing = _registry.get(corpus.name)
    if existing is not None and existing != corpus:
        raise ImproperlyConfigured(f"corpus {corpus.name!r} is already registered differently")
    _registry[corpus.name] = corpus
    return corpus


def get_corpus(name: str) -> Corpus:
    """The registered corpus; KeyError names the unknown corpus."""
    try:
        return _registry[name]
    except KeyError:
        raise KeyError(f"no search corpus {name!r}; registered: {sorted(_registry)}") from None


def all_corpora() -> list[Corpus]:
    """Every registered corpus, by name."""
    return [_registry[name] for name in sorted(_registry)]


def embedding_corpora() -> list[Corpus]:
    """The corpora that have vectors, by name."""
    return [c for c in all_corpora() if c.embeds]
