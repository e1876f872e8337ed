"""Writes the core app owns (re-exported from their modules): database maintenance, making
deleted rows unreadable on disk, and moving a store into PostgreSQL (store_move/)."""

from apps.core.services.database import database_optimize
from apps.core.services.store_move.copy import store_copy
from apps.core.services.store_move.target import target_database
from apps.core.services.vacuum import secure_delete, vacuum_tables

__all__ = [
    "database_optimize",
    "secure_delete",
    "store_copy",
    "target_database",
    "vacuum_tables",
]
