"""/runs (every LLM call and fallback of the lifecycle) and /memory/history (the HISTORY
consolidation writes), read back. A read without `user` (or a session) sees the agent's own
alone; `all_users=True` sees every user's as well."""

from __future__ import annotations

from typing import Literal

from memoryhub_client import _call as http
from memoryhub_client._call import Bound, Call, M, given
from memoryhub_client.models import (
    HistoryFile,
    HistoryPage,
    HistoryQuery,
    ReadFor,
    RunDetail,
    RunPage,
    RunQuery,
)

RunKind = Literal["summary", "consolidate", "compact", "flush", "extract", "compress"]
RunStatus = Literal["ok", "fallback", "failed", "timeout", "skipped"]


class Runs(Bound[M]):
    """hub.runs: the lifecycle's run log, newest first."""

    @http.listing("/runs")
    def list(
        self,
        *,
        kind: RunKind | None = None,
        status: RunStatus | None = None,
        session_id: str | None = None,
        user: str | None = None,
        all_users: bool = False,
        limit: int | None = None,
    ) -> Call[RunPage]:
        query = RunQuery(
            **given(
                kind=kind,
                status=status,
                session_id=session_id,
                user=user,
                all_users=all_users or None,
                limit=limit,
            )
        )
        return Call(RunPage, query=query)

    @http.get("/runs/{run_id}")
    def get(
        self, run_id: int, *, user: str | None = None, all_users: bool = False
    ) -> Call[RunDetail]:
        """One run with the model's raw answer and the facts it stored."""
        query = ReadFor(**given(user=user, all_users=all_users or None))
        return Call(RunDetail, path={"run_id": run_id}, query=query)


class History(Bound[M]):
    """hub.history: HISTORY entries (grep with `q`, by month or session) and its files."""

    @http.listing("/memory/history")
    def list(
        self,
        *,
        q: str | None = None,
        month: str | None = None,
        session_id: str | None = None,
        user: str | None = None,
        all_users: bool = False,
        limit: int | None = None,
    ) -> Call[HistoryPage]:
        """History entries, newest first; `q` is a case-insensitive substring, `month` is
        YYYY-MM."""
        query = HistoryQuery(
            **given(
                q=q,
                month=month,
                session_id=session_id,
                user=user,
                all_users=all_users or None,
                limit=limit,
            )
        )
        return Call(HistoryPage, query=query)

    @http.get("/memory/history/files/{name:path}")
    def file(
        self, name: str, *, user: str | None = None, all_users: bool = False
    ) -> Call[HistoryFile]:
        """memory/HISTORY.md or memory/HISTORY-YYYY-MM.md, rendered."""
        query = ReadFor(**given(user=user, all_users=all_users or None))
        return Call(HistoryFile, path={"name": name}, query=query)
