# ruff: noqa: S608 - table and column names come from model metadata; values are parameters.
"""Copy every row of every model from one database alias into another, in chunks.

Each chunk is read from the source in primary-key order, compared with the rows the target
already has under those keys, and the missing rows are inserted in one transaction. A run that
stops anywhere therefore continues where it stopped, and a row is never inserted twice; a row
that exists in the target with other values is a conflict, and the move stops.
"""

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from django.db import IntegrityError, connections, transaction

from apps.core.meta import column_of
from apps.core.services.store_move.indexes import build_deferred_indexes, defer_vector_indexes
from apps.core.services.store_move.plan import TablePlan, copy_plan
from apps.core.services.store_move.rows import Checksum, row_text
from apps.core.services.store_move.target import MoveError, reset_sequences

Progress = Callable[[str, int], None]


@dataclass
class TableResult:
    """What happened to one table: rows copied now, rows already there, deferred foreign
    keys written, and the count and checksum on both sides."""

    label: str
    table: str
    copied: int = 0
    skipped: int = 0
    fixed: int = 0
    source: Checksum | None = None
    target: Checksum | None = None

    @property
    def ok(self) -> bool:
        return self.source is not None and self.target == self.source


@dataclass
class CopyResult:
    tables: list[TableResult]
    complete: bool  # False: stopped at the chunk limit, nothing verified
    fresh: bool  # the target held no data before this run
    chunks: int

    @property
    def ok(self) -> bool:
        return self.complete and all(t.ok for t in self.tables)


class _Stopped(Exception):
    pass


@dataclass
class _Budget:
    left: int | None
    spent: int = 0

    def spend(self) -> None:
        if self.left is not None and self.spent >= self.left:
            raise _Stopped
        self.spent += 1


def store_copy(
    *,
    source: str,
    target: str,
    chunk_size: int = 2000,
    max_chunks: int | None = None,
    on_table: Callable[[TableResult], None] | None = None,
    progress: Progress | None = None,
) -> CopyResult:
    """Copy every table from `source` into the migrated `target`, then verify each one.

    When everything is copied, each table's count and checksum are computed on both sides, so
    the verdict is about the two databases as they are at the end. `max_chunks` stops after
    that many inserted chunks (complete=False, nothing verified), as an interruption would.
    MoveError when the target holds other data or a row conflicts.
    """
    plans = copy_plan()
    fresh = _clear_generated(plans, target)
    _preflight(plans, source=source, target=target)
    budget = _Budget(left=max_chunks)
    results = [TableResult(label=p.label, table=p.table) for p in plans]
    try:
        for plan, result in zip(plans, results, strict=True):
            if _count(plan, source) > _count(plan, target):
                defer_vector_indexes(target, plan.table)
            _copy_rows(plan, result, source, target, chunk_size, budget, progress)
            result.fixed = _write_deferred(plan, source, target, chunk_size)
    except _Stopped:
        return CopyResult(tables=results, complete=False, fresh=fresh, chunks=budget.spent)
    build_deferred_indexes(target)
    reset_sequences(target, [p.model for p in plans])
    for plan, result in zip(plans, results, strict=True):
        result.source = table_checksum(plan, source, chunk_size)
        result.target = table_checksum(plan, target, chunk_size)
        if on_table is not None:
            on_table(result)
    return CopyResult(tables=results, complete=True, fresh=fresh, chunks=budget.spent)


def _rows(plan: TablePlan, alias: str, chunk_size: int, **filters: object) -> Iterator[list[tuple]]:
    """The table's rows in primary-key order, chunk by chunk (keyset pagination)."""
    qs = plan.model._base_manager.using(alias).filter(**filters).order_by("pk")
    pk = plan.fields.index(plan.model._meta.pk)
    last = None
    while True:
        page = qs if last is None else qs.filter(pk__gt=last)
        rows = list(page.values_list(*plan.attnames)[:chunk_size])
        if not rows:
            return
        yield rows
        last = rows[-1][pk]


def _count(plan: TablePlan, alias: str) -> int:
    return plan.model._base_manager.using(alias).count()


def _comparable(plan: TablePlan, row: Sequence[object]) -> str:
    """A row's canonical text without its deferred foreign keys (NULL until the 2nd pass)."""
    skip = set(plan.deferred_index())
    return row_text([v for i, v in enumerate(row) if i not in skip])


def _existing(plan: TablePlan, alias: str, pks: list) -> dict:
    pk = plan.fields.index(plan.model._meta.pk)
    rows = plan.model._base_manager.using(alias).filter(pk__in=pks).values_list(*plan.attnames)
    return {row[pk]: row for row in rows}


def _copy_rows(
    plan: TablePlan,
    result: TableResult,
    source: str,
    target: str,
    chunk_size: int,
    budget: _Budget,
    progress: Progress | None,
) -> None:
    pk = plan.fields.index(plan.model._meta.pk)
    read = 0
    for rows in _rows(plan, source, chunk_size):
        read += len(rows)
        existing = _existing(plan, target, [row[pk] for row in rows])
        new = []
        for row in rows:
            there = existing.get(row[pk])
            if there is None:
                new.append(row)
            elif _comparable(plan, there) != _comparable(plan, row):
                raise MoveError(
                    f"{plan.table}: the target's row {row[pk]} differs from the source's; "
                    "the target holds other data (use an empty database)"
                )
        result.skipped += len(rows) - len(new)
        if new:
            budget.spend()
            _insert(plan, target, new)
            result.copied += len(new)
        if progress is not None:
            progress(plan.label, read)


def _insert(plan: TablePlan, alias: str, rows: list[tuple]) -> None:
    """One COPY per chunk: fast, and statement-level triggers (the BM25 statistics) see the
    whole chunk at once. Values are prepared by the model fields, as for an INSERT."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    deferred = set(plan.deferred_index())
    columns = ", ".join(quote(column_of(f)) for f in plan.fields)
    sql = f"COPY {quote(plan.table)} ({columns}) FROM STDIN"
    try:
        with (
            transaction.atomic(using=alias),
            connection.cursor() as cursor,
            cursor.cursor.copy(sql) as copy,
        ):
            for row in rows:
                copy.write_row(
                    [
                        None if i in deferred else fld.get_db_prep_save(value, connection)
                        for i, (fld, value) in enumerate(zip(plan.fields, row, strict=True))
                    ]
                )
    except IntegrityError as exc:
        raise MoveError(
            f"{plan.table}: the target refused rows: {str(exc).strip()} "
            "(the target holds other data: use an empty database)"
        ) from exc


def _write_deferred(plan: TablePlan, source: str, target: str, chunk_size: int) -> int:
    """Second pass: set the deferred foreign keys (now that every row exists); idempotent."""
    connection = connections[target]
    quote = connection.ops.quote_name
    pk_field = plan.model._meta.pk
    written = 0
    for fld in plan.deferred:
        sql = (
            f"UPDATE {quote(plan.table)} SET {quote(column_of(fld))} = %s "
            f"WHERE {quote(column_of(pk_field))} = %s"
        )
        narrow = TablePlan(model=plan.model, fields=(pk_field, fld))
        for rows in _rows(narrow, source, chunk_size, **{f"{fld.attname}__isnull": False}):
            there = dict(
                plan.model._base_manager.using(target)
                .filter(pk__in=[r[0] for r in rows])
                .values_list("pk", fld.attname)
            )
            todo = [
                (fld.get_db_prep_save(v, connection), pk_field.get_db_prep_save(k, connection))
                for k, v in rows
                if there.get(k) != v
            ]
            if todo:
                with transaction.atomic(using=target), connection.cursor() as cursor:
                    cursor.executemany(sql, todo)
                written += len(todo)
    return written


def table_checksum(plan: TablePlan, alias: str, chunk_size: int = 2000) -> Checksum:
    """Count and checksum of a table's rows at `alias`."""
    checksum = Checksum()
    for rows in _rows(plan, alias, chunk_size):
        for row in rows:
            checksum.add(row)
    return checksum


def _clear_generated(plans: list[TablePlan], target: str) -> bool:
    """On a target with no data, drop the rows `migrate` generated (content types and
    permissions, numbered in its own order): the source's are copied with their ids."""
    fresh = not any(p.model._base_manager.using(target).exists() for p in plans if not p.generated)
    if fresh:
        connection = connections[target]
        with transaction.atomic(using=target), connection.cursor() as cursor:
            for plan in reversed(plans):  # permissions before their content types
                if plan.generated:
                    cursor.execute(f"DELETE FROM {connection.ops.quote_name(plan.table)}")
    return fresh


def _preflight(plans: list[TablePlan], *, source: str, target: str) -> None:
    """Refuse a target holding data that is not (part of) this store, before writing."""
    for plan in plans:
        there = plan.model._base_manager.using(target)
        count = there.count()
        if not count:
            continue
        ours = plan.model._base_manager.using(source).count()
        if count > ours:
            raise MoveError(
                f"{plan.table}: the target has {count} rows, this store {ours}; "
                "the target holds other data (use an empty database)"
            )
        for pk in (
            there.order_by("pk").values_list("pk", flat=True).first(),
            there.order_by("-pk").values_list("pk", flat=True).first(),
        ):
            mine = _existing(plan, source, [pk]).get(pk)
            theirs = _existing(plan, target, [pk])[pk]
            if mine is None or _comparable(plan, mine) != _comparable(plan, theirs):
                raise MoveError(
                    f"{plan.table}: the target's row {pk} is not this store's; "
                    "the target holds other data (use an empty database)"
                )
