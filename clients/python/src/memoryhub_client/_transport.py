"""Sending a Request: headers, timeouts, retries with backoff, errors, pages.

The policy (what is retried, how long to wait, what an answer becomes) is written once in
`Policy`; `SyncTransport` and `AsyncTransport` differ only in how they send and sleep.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from memoryhub_client._call import API_PREFIX
from memoryhub_client._version import __version__
from memoryhub_client.errors import Unavailable, error_for, retry_after_seconds

DEFAULT_URL = "http://127.0.0.1:8000"
RETRIED_STATUSES = frozenset({429, 503})

Outcome = httpx.Response | httpx.TransportError


@dataclass(frozen=True)
class Policy:
    """Retries: up to `max_retries` more attempts of a retryable request (idempotent, or an
    append whose messages all carry an idempotency key) after a 429, a 503 or a transport
    error, waiting the server's Retry-After when it sent one, else exponential backoff with
    full jitter (backoff * 2**attempt, at most max_backoff). A Retry-After over max_wait is
    not waited for: the error is raised with its retry_after."""

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_wait: float = 60.0

    def delay(self, request: Any, outcome: Outcome, attempt: int) -> float | None:
        """Seconds to wait before attempt `attempt + 1`, or None: do not retry."""
        if not request.retry or attempt >= self.max_retries:
            return None
        if isinstance(outcome, httpx.Response):
            if outcome.status_code not in RETRIED_STATUSES:
                return None
            after = retry_after_seconds(outcome.headers.get("Retry-After"))
            if after is not None:
                return after if after <= self.max_wait else None
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))

    @staticmethod
    def finish(request: Any, outcome: Outcome) -> Any:
        """The answer read as the request's declared type, or the error it stands for."""
        if isinstance(outcome, httpx.TransportError):
            kind = "timed out" if isinstance(outcome, httpx.TimeoutException) else "no answer"
            raise Unavailable(None, f"{kind}: {type(outcome).__name__}: {outcome}") from outcome
        if outcome.is_success:
            return request.read(outcome)
        try:
            body: Any = outcome.json()
        except ValueError:  # not the API's JSON (a proxy's page, say): its status and a start
            body = f"{outcome.reason_phrase}: {outcome.text.strip()[:200]}"
        raise error_for(outcome.status_code, body, outcome.headers.get("Retry-After"))


def settings(url: str | None, key: str | None) -> tuple[str, dict[str, str]]:
    """The base URL (MEMORYHUB_URL by default, without a trailing API prefix) and the headers
    (the key, MEMORYHUB_KEY by default, as a Bearer token)."""
    base = (url or os.environ.get("MEMORYHUB_URL") or DEFAULT_URL).rstrip("/")
    base = base.removesuffix(API_PREFIX)
    headers = {"Accept": "application/json", "User-Agent": f"memoryhub-client/{__version__}"}
    key = key if key is not None else os.environ.get("MEMORYHUB_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return base, headers


class _Base:
    def __init__(self, client: httpx.Client | httpx.AsyncClient, policy: Policy) -> None:
        self.client = client
        self.policy = policy

    def build(self, request: Any) -> httpx.Request:
        return self.client.build_request(
            request.method,
            request.path,
            params=request.params,
            json=request.json,
            content=request.content,
        )


class SyncTransport(_Base):
    """Sends on an httpx.Client, sleeping between attempts."""

    client: httpx.Client

    def send(self, request: Any) -> Any:
        attempt = 0
        while True:
            outcome: Outcome
            try:
                outcome = self.client.send(self.build(request))
            except httpx.TransportError as exc:
                outcome = exc
            wait = self.policy.delay(request, outcome, attempt)
            if wait is None:
                return self.policy.finish(request, outcome)
            if isinstance(outcome, httpx.Response):
                outcome.close()
            time.sleep(wait)
            attempt += 1

    def iterate(self, request: Any) -> Iterator[Any]:
        while True:
            page = self.send(request)
            yield from page.items
            if not page.next_cursor:
                return
            request = request.with_cursor(page.next_cursor)

    def close(self) -> None:
        self.client.close()


class AsyncTransport(_Base):
    """Sends on an httpx.AsyncClient, awaiting between attempts."""

    client: httpx.AsyncClient

    async def send(self, request: Any) -> Any:
        attempt = 0
        while True:
            outcome: Outcome
            try:
                outcome = await self.client.send(self.build(request))
            except httpx.TransportError as exc:
                outcome = exc
            wait = self.policy.delay(request, outcome, attempt)
            if wait is None:
                return self.policy.finish(request, outcome)
            if isinstance(outcome, httpx.Response):
                await outcome.aclose()
            await asyncio.sleep(wait)
            attempt += 1

    async def iterate(self, request: Any) -> AsyncIterator[Any]:
        while True:
            page = await self.send(request)
            for item in page.items:
                yield item
            if not page.next_cursor:
                return
            request = request.with_cursor(page.next_cursor)

    async def aclose(self) -> None:
        await self.client.aclose()
