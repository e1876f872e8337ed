"""Migration operations creating search indexes for a table, per database vendor, reversibly.

Use them in the migration of the app that owns the model, after the model exists:

    from apps.search.operations import AddKeywordIndex, AddVectorIndex

    operations = [
        AddKeywordIndex("entry", fields=("name", "content")),          # this app's model
        AddVectorIndex("entry", field="embedding"),
        # or another app's model: AddKeywordIndex("conversations.message", fields=(...))
    ]

SQLite gets an FTS5 external-content table with triggers, and a vec0 table with triggers;
PostgreSQL gets the BM25 side tables with triggers (apps/search/backends/postgres.py) and an
HNSW vector_cosine_ops index. Existing rows are indexed when the operation runs.
"""

from collections.abc import Sequence

from django.db import migrations

from apps.search.backends import postgres, sqlite
from apps.search.backends.base import TableSpec, table_spec


class _IndexOperation(migrations.operations.base.Operation):
    reversible = True
    reduces_to_sql = False
    atomic = True

    def __init__(self, model_name: str, *, agent_field: str = "agent") -> None:
        self.model_name = model_name
        self.agent_field = agent_field

    def state_forwards(self, app_label, state) -> None:
        pass  # no model state changes: the side tables are not models

    def _spec(self, app_label, state, connection) -> TableSpec:
        label = self.model_name if "." in self.model_name else f"{app_label}.{self.model_name}"
        return table_spec(
            state.apps.get_model(label),
            connection,
            agent_field=self.agent_field,
            text_fields=getattr(self, "fields", ()),
            vector_field=getattr(self, "field", None),
        )

    def _run(self, schema_editor, statements: Sequence[str]) -> None:
        for statement in statements:
            schema_editor.execute(statement, params=None)

    def _sql(self, vendor: str, spec: TableSpec, *, forwards: bool) -> list[str]:
        raise NotImplementedError

    def database_forwards(self, app_label, schema_editor, from_state, to_state) -> None:
        conn = schema_editor.connection
        if conn.vendor in ("sqlite", "postgresql"):
            spec = self._spec(app_label, to_state, conn)
            self._run(schema_editor, self._sql(conn.vendor, spec, forwards=True))

    def database_backwards(self, app_label, schema_editor, from_state, to_state) -> None:
        conn = schema_editor.connection
        if conn.vendor in ("sqlite", "postgresql"):
            spec = self._spec(app_label, from_state, conn)
            self._run(schema_editor, self._sql(conn.vendor, spec, forwards=False))


class AddKeywordIndex(_IndexOperation):
    """BM25 keyword index over `fields` of a model (tokens of all fields form one document)."""

    def __init__(
        self, model_name: str, *, fields: Sequence[str], agent_field: str = "agent"
    ) -> None:
        super().__init__(model_name, agent_field=agent_field)
        self.fields = tuple(fields)

    def deconstruct(self):
        kwargs = {"fields": self.fields}
        if self.agent_field != "agent":
            kwargs["agent_field"] = self.agent_field
        return self.__class__.__qualname__, [self.model_name], kwargs

    def describe(self) -> str:
        return f"Create keyword (BM25) index on {self.model_name} ({', '.join(self.fields)})"

    def _sql(self, vendor: str, spec: TableSpec, *, forwards: bool) -> list[str]:
        module = postgres if vendor == "postgresql" else sqlite
        if forwards:
            return module.keyword_index_sql(spec)
        return module.drop_keyword_index_sql(spec)


class AddVectorIndex(_IndexOperation):
    """Cosine nearest-neighbour index on a VectorField (HNSW on PostgreSQL, vec0 on SQLite)."""

    def __init__(self, model_name: str, *, field: str, agent_field: str = "agent") -> None:
        super().__init__(model_name, agent_field=agent_field)
        self.field = field

    def deconstruct(self):
        kwargs = {"field": self.field}
        if self.agent_field != "agent":
            kwargs["agent_field"] = self.agent_field
        return self.__class__.__qualname__, [self.model_name], kwargs

    def describe(self) -> str:
        return f"Create vector index on {self.model_name}.{self.field}"

    def _sql(self, vendor: str, spec: TableSpec, *, forwards: bool) -> list[str]:
        module = postgres if vendor == "postgresql" else sqlite
        if forwards:
            return module.vector_index_sql(spec)
        return module.drop_vector_index_sql(spec)
