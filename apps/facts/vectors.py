"""Cosine distance as an ORM expression on both backends, for the few vector reads of facts.

Interim: the search layer (apps/search) owns vector indexes; facts and categories use this
expression until their corpora are registered there (see docs/memory.md).
"""

from typing import Any

import numpy as np
from django.db.models import F, FloatField, Func


class CosineDistance(Func):
    """1 - cosine(field, vector): pgvector `<=>` on PostgreSQL, sqlite-vec on SQLite."""

    output_field = FloatField()

    def __init__(self, field: str, vector: Any) -> None:
        self.vector = np.asarray(vector, dtype=np.float32)
        super().__init__(F(field))

    def as_sql(self, compiler, connection, **extra):  # type: ignore[override]
        sql, params = compiler.compile(self.source_expressions[0])
        if connection.vendor == "postgresql":
            text = "[" + ",".join(repr(float(x)) for x in self.vector) + "]"
            return f"({sql} <=> %s::vector)", [*params, text]
        return f"vec_distance_cosine({sql}, %s)", [*params, self.vector.tobytes()]


def unit(vector: Any) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array
