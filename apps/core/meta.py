"""A model's concrete fields, columns and key type, for code that writes raw SQL from _meta."""

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper


def concrete_field(model: type[models.Model], name: str) -> models.Field:
    """`model`'s field `name` ("pk": its primary key); FieldDoesNotExist unless it has a
    column (a reverse relation or a many-to-many has none)."""
    field = model._meta.pk if name == "pk" else model._meta.get_field(name)
    if not isinstance(field, models.Field) or field.column is None:
        raise FieldDoesNotExist(f"{model.__name__}.{name} has no column")
    return field


def column_of(field: models.Field) -> str:
    """The column of a concrete field; FieldDoesNotExist for one without."""
    if field.column is None:
        raise FieldDoesNotExist(f"{field} has no column")
    return field.column


def field_column(model: type[models.Model], name: str) -> str:
    """The column of `model`'s field `name` ("pk": its primary key's)."""
    return column_of(concrete_field(model, name))


def pk_type(model: type[models.Model], connection: BaseDatabaseWrapper) -> str:
    """The column type of a foreign key to `model` on `connection`."""
    kind = model._meta.pk.rel_db_type(connection)
    if kind is None:
        raise FieldDoesNotExist(f"{model.__name__}'s primary key has no column type")
    return kind
