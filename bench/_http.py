"""Tiny stdlib HTTP client for the benchmarks: they talk to a running server like an agent."""

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


@dataclass
class Api:
    base: str  # e.g. http://127.0.0.1:8000/api/v1
    key: str
    timeout: float = 120.0

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
        """Return (status, parsed JSON or None, seconds)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
                status = resp.status
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            status = exc.code
        elapsed = time.perf_counter() - start
        return status, (json.loads(raw) if raw else None), elapsed


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]
