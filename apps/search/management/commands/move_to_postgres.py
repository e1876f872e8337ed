"""Move this store (DATABASES['default'], the embedded SQLite file by default) into PostgreSQL."""

import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections

from apps.core.services.store_move.copy import CopyResult, TableResult, store_copy
from apps.core.services.store_move.target import (
    MoveError,
    target_config,
    target_database,
    unapplied_migrations,
    vacuum_analyze,
)
from apps.search.bm25_check import bm25_checks, bm25_statistics

PROGRESS_EVERY = 50  # chunks between progress lines on a long table


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


class Command(BaseCommand):
    help = (
        "Copy every row of this store into a PostgreSQL database (created and migrated if "
        "needed), in chunks; re-running continues an interrupted move. Each table's count "
        "and checksum are compared, and the BM25 statistics checked; exit 1 on a mismatch."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("database_url", help="postgres://user:password@host:5432/name")
        parser.add_argument("--chunk-size", type=int, default=2000, help="rows per chunk")
        parser.add_argument(
            "--max-chunks",
            type=int,
            default=None,
            help="stop after inserting this many chunks (exit 3); run again to continue",
        )
        parser.add_argument(
            "--no-vacuum", action="store_true", help="skip VACUUM ANALYZE of the target"
        )

    def handle(
        self,
        *args: str,
        database_url: str,
        chunk_size: int,
        max_chunks: int | None,
        no_vacuum: bool,
        **opts: Any,  # Any: BaseCommand.handle's own argument types
    ) -> None:
        if chunk_size < 1 or (max_chunks is not None and max_chunks < 1):
            raise CommandError("--chunk-size and --max-chunks must be positive")
        self._verbosity = opts.get("verbosity", 1)
        self._chunk_size = chunk_size
        try:
            target_config(database_url)  # a bad URL is refused before anything is opened
        except MoveError as exc:
            raise CommandError(exc.message) from exc
        pending = unapplied_migrations(DEFAULT_DB_ALIAS)
        if pending:
            raise CommandError(
                f"this store has {len(pending)} unapplied migrations ({pending[0]}, …): "
                "run `manage.py migrate` first"
            )
        started = time.monotonic()
        try:
            with target_database(database_url) as target:
                alias = target.alias
                what = ["created"] if target.created else []
                what.append(f"{target.migrations} migrations applied")
                self.stdout.write(f"==> target {_redacted(database_url)} ({', '.join(what)})")
                self.stdout.write(f"==> copying every table in chunks of {chunk_size:,} rows")
                self._verifying = False
                result = store_copy(
                    source=DEFAULT_DB_ALIAS,
                    target=alias,
                    chunk_size=chunk_size,
                    max_chunks=max_chunks,
                    on_table=self._table_line,
                    progress=self._progress,
                )
                if not result.complete:
                    raise CommandError(
                        f"stopped after {result.chunks} chunks (--max-chunks): run the same "
                        "command again to continue",
                        returncode=3,
                    )
                bm25_ok = self._bm25(alias)
                if not no_vacuum:
                    vacuum_analyze(alias)
        except MoveError as exc:
            raise CommandError(exc.message) from exc
        self._summary(result, bm25_ok, time.monotonic() - started, database_url)

    def _table_line(self, t: TableResult) -> None:
        assert t.source is not None, "store_copy reports a table after both checksums"
        assert t.target is not None
        if not self._verifying:
            self._verifying = True
            self.stdout.write("==> verifying: count and checksum of every table, on both sides")
        state = "OK" if t.ok else f"MISMATCH (target: {t.target.count:,} rows)"
        self.stdout.write(
            f"{t.label:<36} {t.source.count:>10,} rows {t.copied:>10,} copied "
            f"{t.skipped:>10,} already there  checksum {t.source.hex[:16]} {state}"
        )

    def _progress(self, label: str, rows: int) -> None:
        if self._verbosity > 1 or rows % (PROGRESS_EVERY * self._chunk_size) == 0:
            self.stdout.write(f"   {label}: {rows:,} rows read")

    def _bm25(self, alias: str) -> bool:
        """The target's BM25 tables against its rows (and the source's, when PostgreSQL)."""
        ok = True
        for check in bm25_checks(using=alias):
            state = "OK" if check.ok else "MISMATCH: " + "; ".join(check.problems)
            ok = ok and check.ok
            self.stdout.write(
                f"BM25 {check.corpus:<31} {check.documents:>10,} documents "
                f"{check.agents:>6,} agents  statistics match the rows: {state}"
            )
        if connections[DEFAULT_DB_ALIAS].vendor == "postgresql":
            same = bm25_statistics(using=DEFAULT_DB_ALIAS) == bm25_statistics(using=alias)
            ok = ok and same
            self.stdout.write(
                f"BM25 statistics equal to the source's: {'OK' if same else 'MISMATCH'}"
            )
        return ok

    def _summary(self, result: CopyResult, bm25_ok: bool, seconds: float, url: str) -> None:
        copied = sum(t.copied for t in result.tables)
        there = sum(t.skipped for t in result.tables)
        bad = [t.label for t in result.tables if not t.ok]
        if bad or not bm25_ok:
            what = ", ".join(bad) if bad else "the BM25 statistics"
            raise CommandError(f"verification failed: {what} differ between source and target")
        self.stdout.write(
            f"==> moved {copied:,} rows ({there:,} were already there) in "
            f"{len(result.tables)} tables in {seconds:.1f} s; every table's count and checksum "
            "match the source's"
        )
        self.stdout.write(
            f"Now run memoryhub with DATABASE_URL={_redacted(url)} (and the same "
            "DJANGO_SECRET_KEY, e.g. from var/secret_key, so browser logins stay valid)."
        )
