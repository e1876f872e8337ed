"""A vector column that works on both deployments."""

from typing import Any

import numpy as np
from django.core import checks
from django.db import models


def _parse_text(value: str) -> np.ndarray:
    """pgvector's text output, '[0.1,0.2,...]', as a float32 array."""
    return np.array(value.strip("[]").split(","), dtype=np.float32)


class VectorField(models.Field):
    """Fixed-size float vector: pgvector `vector(n)` on PostgreSQL, float32 BLOB on SQLite.

    The BLOB is sqlite-vec's native format, so `vec_distance_cosine(col, ?)` and vec0 tables
    read it without conversion. Python values are numpy float32 arrays.
    """

    description = "Vector"
    empty_strings_allowed = False

    def __init__(self, *args: Any, dimensions: int, **kwargs: Any) -> None:
        self.dimensions = dimensions
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> tuple:
        name, path, args, kwargs = super().deconstruct()
        kwargs["dimensions"] = self.dimensions
        return name, path, args, kwargs

    def db_type(self, connection: Any) -> str:
        if connection.vendor == "postgresql":
            return f"vector({self.dimensions})"
        return "blob"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> np.ndarray | None:
        if value is None:
            return None
        if isinstance(value, (bytes, bytearray, memoryview)):
            return np.frombuffer(bytes(value), dtype=np.float32).copy()
        if isinstance(value, np.ndarray):
            return value.astype(np.float32)
        return _parse_text(value)

    def to_python(self, value: Any) -> np.ndarray | None:
        if value is None or isinstance(value, np.ndarray):
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            return np.frombuffer(bytes(value), dtype=np.float32).copy()
        if isinstance(value, str):
            return _parse_text(value)
        return np.asarray(value, dtype=np.float32)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if value is None:
            return None
        array = np.asarray(value, dtype=np.float32)
        if array.shape != (self.dimensions,):
            raise ValueError(f"expected {self.dimensions} dimensions, got {array.shape}")
        if connection.vendor == "postgresql":
            # pgvector's text input format; psycopg needs no adapter registered for it.
            return "[" + ",".join(repr(float(x)) for x in array) + "]"
        return array.tobytes()

    def value_to_string(self, obj: Any) -> str:
        value = self.value_from_object(obj)
        return "" if value is None else ",".join(f"{x:.7g}" for x in value)

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        errors = super().check(**kwargs)
        if not isinstance(self.dimensions, int) or self.dimensions <= 0:
            errors.append(checks.Error("dimensions must be a positive int", obj=self))
        return errors
