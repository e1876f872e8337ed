"""A vector column that works on both deployments, and the request field types every
schema shares (datetimes, free-form JSON)."""

from datetime import UTC, datetime
from typing import Annotated, Any, cast

import numpy as np
from django.core import checks
from django.db import models
from django.utils import timezone
from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from apps.core.errors import InvalidInput, PayloadTooLarge
from apps.core.validation import check_json_limits


def to_utc(value: datetime) -> datetime:
    """Aware UTC. A naive time is local time in settings.TIME_ZONE (seed 000); a wall time
    a DST change skips or repeats takes fold=0: the offset before the change. OverflowError
    when UTC leaves year 1-9999."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.get_default_timezone(), fold=0)
    return value.astimezone(UTC)


def _utc(value: datetime) -> datetime:
    """to_utc for request fields; refused (422) when UTC leaves year 1-9999."""
    try:
        return to_utc(value)
    except OverflowError:
        raise PydanticCustomError(
            "datetime_range", "datetime must be within year 1 to 9999 in UTC"
        ) from None


def bounded_json(value: Any) -> Any:  # Any: any JSON value (json.loads' own type)
    """check_json_limits as a field validator; memoryhub/api.py answers json_too_large 413."""
    try:
        check_json_limits(value)
    except PayloadTooLarge as exc:
        raise PydanticCustomError("json_too_large", exc.message) from None
    except InvalidInput as exc:
        raise PydanticCustomError("json_too_deep", exc.message) from None
    return value


# Request datetimes: any offset (none: TIME_ZONE), stored and compared as aware UTC.
UtcDatetime = Annotated[datetime, AfterValidator(_utc)]
# Free-form JSON a client stores with a row (metadata, tool calls, arguments).
# Any: JSON values (json.loads' own type)
JsonObject = Annotated[dict[str, Any], AfterValidator(bounded_json)]
# Any: JSON values (json.loads' own type)
JsonObjectList = Annotated[list[dict[str, Any]], AfterValidator(bounded_json)]
# Floats that must compare sanely: no NaN or infinity, even spelled as strings.
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]


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

    # Any: Field.__init__'s own arguments
    def __init__(self, *args: Any, dimensions: int, **kwargs: Any) -> None:
        self.dimensions = dimensions
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> tuple:
        name, path, args, kwargs = super().deconstruct()
        kwargs["dimensions"] = self.dimensions
        return name, path, args, kwargs

    def db_type(self, connection: Any) -> str:  # Any: Field.db_type's own signature
        if connection.vendor == "postgresql":
            return f"vector({self.dimensions})"
        return "blob"

    # Any: the database driver's value; Field's own signature
    def from_db_value(self, value: Any, expression: Any, connection: Any) -> np.ndarray | None:
        if value is None:
            return None
        if isinstance(value, (bytes, bytearray, memoryview)):
            return np.frombuffer(bytes(value), dtype=np.float32).copy()
        if isinstance(value, np.ndarray):
            return value.astype(np.float32)
        return _parse_text(value)

    def to_python(self, value: Any) -> np.ndarray | None:  # Any: Field.to_python's own signature
        if value is None or isinstance(value, np.ndarray):
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            return np.frombuffer(bytes(value), dtype=np.float32).copy()
        if isinstance(value, str):
            return _parse_text(value)
        return np.asarray(value, dtype=np.float32)

    # Any: Field.get_db_prep_value's own signature
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

    def value_to_string(self, obj: Any) -> str:  # Any: Field.value_to_string's own signature
        value = cast(np.ndarray | None, self.value_from_object(obj))  # what from_db_value gave
        return "" if value is None else ",".join(f"{x:.7g}" for x in value)

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:  # Any: Field.check's own signature
        errors = super().check(**kwargs)
        if not isinstance(self.dimensions, int) or self.dimensions <= 0:
            errors.append(checks.Error("dimensions must be a positive int", obj=self))
        return errors
