"""Writes the core app owns (re-exported from their modules)."""

from apps.core.services.database import database_optimize

__all__ = ["database_optimize"]
