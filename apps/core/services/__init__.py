"""Writes the core app owns (re-exported from their modules): database maintenance, and
moving a store into PostgreSQL (store_move/)."""

from apps.core.services.database import database_optimize
from apps.core.services.store_move.copy import store_copy
from apps.core.services.store_move.target import target_database

__all__ = [
    "database_optimize",
    "store_copy",
    "target_database",
]
