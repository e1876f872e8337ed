"""A canonical text form of a row, and an order-independent checksum over many rows.

Both databases hand back the same Python values through the model fields (aware datetimes,
UUIDs, parsed JSON, float32 vectors), so the canonical form is computed from those values,
never from the raw column bytes: a SQLite BLOB and a pgvector '[…]' give one text.
"""

import base64
import datetime as dt
import decimal
import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_MOD = 1 << 256


def canonical(value: object) -> object:
    """A JSON-ready form of one field value that is the same on every backend."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value)  # exact: both backends store IEEE doubles
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return f"{value // dt.timedelta(microseconds=1)}us"
    if isinstance(value, np.ndarray):
        return "f32:" + base64.b64encode(value.astype("<f4").tobytes()).decode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "b:" + base64.b64encode(bytes(value)).decode()
    if isinstance(value, (dict, list, tuple)):
        # JSON columns: key order is not kept by jsonb, so keys are sorted.
        return "j:" + json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    if isinstance(value, (uuid.UUID, decimal.Decimal)):
        return str(value)
    return str(value)  # e.g. a time zone from django-celery-beat


def row_text(values: Sequence[object]) -> str:
    """The canonical serialisation of a row (its field values in model field order)."""
    return json.dumps([canonical(v) for v in values], separators=(",", ":"))


@dataclass
class Checksum:
    """Count and checksum of a table: the sum of the rows' SHA-256 values modulo 2^256.

    A sum does not depend on the order rows are read in (collations differ between
    backends), and unlike XOR two identical rows do not cancel out.
    """

    count: int = 0
    total: int = 0

    def add(self, values: Sequence[object]) -> None:
        digest = hashlib.sha256(row_text(values).encode()).digest()
        self.total = (self.total + int.from_bytes(digest, "big")) % _MOD
        self.count += 1

    @property
    def hex(self) -> str:
        return f"{self.total:064x}"
