"""Migration operations creating search indexes for a table, per database vendor, reversibly.

Use them in the migration of the app that owns the model, after the model exists:

    from apps.search.operations import AddContainsIndex, AddKeywordIndex, AddVectorIndex

    operations = [
        AddKeywordIndex("entry", fields=("name", "content")),          # this app's model
        AddVectorIndex("entry", field="embedding"),
        AddContainsIndex("entry", field="content"),                    # contains_search
        # or another app's model: AddKeywordIndex("conversations.message", fields=(...))
    ]

SQLite gets an FTS5 external-content table with triggers, a vec0 table with triggers, and
an FTS5 trigram table with triggers; PostgreSQL gets the BM25 side tables with triggers
(apps/search/backends/postgres/), an HNSW vector_cosine_ops index, and a pg_trgm GIN index.
Existing rows are indexed when the operation runs.
"""

from collections.abc import Sequence

from django.db import migrations
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import ProjectState

from apps.search.backends import postgres, sqlite
from apps.search.backends.base import TableSpec, table_spec

VENDORS = ("sqlite", "postgresql")


class _IndexOperation(migrations.operations.base.Operation):
    reversible = True
    reduces_to_sql = False
    atomic = True

    # Drop* subclasses invert the direction: they remove the index going forwards.
    drops = False
    # Which index: the vendor modules' `<index>_index_sql` and `drop_<index>_index_sql`.
    index: str

    def __init__(
        self, model_name: str, *, agent_field: str = "agent", vendors: Sequence[str] = VENDORS
    ) -> None:
        self.model_name = model_name
        self.agent_field = agent_field
        self.vendors = tuple(vendors)

    def _kwargs(self) -> dict[str, object]:
        kwargs: dict[str, object] = {}
        if self.agent_field != "agent":
            kwargs["agent_field"] = self.agent_field
        if self.vendors != VENDORS:
            kwargs["vendors"] = self.vendors
        return kwargs

    def state_forwards(self, app_label: str, state: ProjectState) -> None:
        pass  # no model state changes: the side tables are not models

    def _columns(self) -> dict:
        """The table_spec arguments naming the indexed columns."""
        raise NotImplementedError

    def _spec(
        self, app_label: str, state: ProjectState, connection: BaseDatabaseWrapper
    ) -> TableSpec:
        label = self.model_name if "." in self.model_name else f"{app_label}.{self.model_name}"
        model = state.apps.get_model(label)
        return table_spec(model, connection, agent_field=self.agent_field, **self._columns())

    def _sql(self, vendor: str, spec: TableSpec, *, forwards: bool) -> list[str]:
        module = postgres if vendor == "postgresql" else sqlite
        name = f"{self.index}_index_sql" if forwards else f"drop_{self.index}_index_sql"
        return getattr(module, name)(spec)

    def _apply(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        state: ProjectState,
        *,
        create: bool,
    ) -> None:
        """Create (or drop) the index of the model as `state` has it, on the vendors named."""
        conn = schema_editor.connection
        if conn.vendor in self.vendors:
            spec = self._spec(app_label, state, conn)
            for statement in self._sql(conn.vendor, spec, forwards=create):
                schema_editor.execute(statement, params=None)

    # The state with the index's model, both ways: the one after a create, before a drop.
    def database_forwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        state = from_state if self.drops else to_state
        self._apply(app_label, schema_editor, state, create=not self.drops)

    def database_backwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        state = to_state if self.drops else from_state
        self._apply(app_label, schema_editor, state, create=self.drops)


class AddKeywordIndex(_IndexOperation):
    """BM25 keyword index over `fields` of a model (tokens of all fields form one document)."""

    index = "keyword"

    def __init__(
        self,
        model_name: str,
        *,
        fields: Sequence[str],
        agent_field: str = "agent",
        vendors: Sequence[str] = VENDORS,
    ) -> None:
        super().__init__(model_name, agent_field=agent_field, vendors=vendors)
        self.fields = tuple(fields)

    def deconstruct(self) -> tuple[str, list[str], dict[str, object]]:
        return (
            self.__class__.__qualname__,
            [self.model_name],
            {"fields": self.fields, **self._kwargs()},
        )

    def describe(self) -> str:
        return f"Create keyword (BM25) index on {self.model_name} ({', '.join(self.fields)})"

    def _columns(self) -> dict:
        return {"text_fields": self.fields}


class _FieldIndexOperation(_IndexOperation):
    """An index on one field of the model, named by `field`."""

    def __init__(
        self,
        model_name: str,
        *,
        field: str,
        agent_field: str = "agent",
        vendors: Sequence[str] = VENDORS,
    ) -> None:
        super().__init__(model_name, agent_field=agent_field, vendors=vendors)
        self.field = field

    def deconstruct(self) -> tuple[str, list[str], dict[str, object]]:
        return (
            self.__class__.__qualname__,
            [self.model_name],
            {"field": self.field, **self._kwargs()},
        )


class AddVectorIndex(_FieldIndexOperation):
    """Cosine nearest-neighbour index on a VectorField (HNSW on PostgreSQL, vec0 on SQLite)."""

    index = "vector"

    def describe(self) -> str:
        return f"Create vector index on {self.model_name}.{self.field}"

    def _columns(self) -> dict:
        return {"vector_field": self.field}


class DropKeywordIndex(AddKeywordIndex):
    """The inverse of AddKeywordIndex. With vendors=("sqlite",) around an operation that
    remakes the table on SQLite (AddField of a NOT NULL column, AlterField), then an
    AddKeywordIndex with the same vendors: the remake would drop the triggers."""

    drops = True

    def describe(self) -> str:
        return f"Drop keyword (BM25) index on {self.model_name}"


class DropVectorIndex(AddVectorIndex):
    """The inverse of AddVectorIndex (see DropKeywordIndex)."""

    drops = True

    def describe(self) -> str:
        return f"Drop vector index on {self.model_name}.{self.field}"


class AddContainsIndex(_FieldIndexOperation):
    """Substring (contains_search) index on one text field: a pg_trgm GIN index on the
    expression `icontains` compares (PostgreSQL), an FTS5 trigram table (SQLite)."""

    index = "contains"

    def describe(self) -> str:
        return f"Create contains (trigram) index on {self.model_name}.{self.field}"

    def _columns(self) -> dict:
        return {"text_fields": (self.field,)}


class DropContainsIndex(AddContainsIndex):
    """The inverse of AddContainsIndex (see DropKeywordIndex: wrap SQLite table remakes)."""

    drops = True

    def describe(self) -> str:
        return f"Drop contains (trigram) index on {self.model_name}.{self.field}"
