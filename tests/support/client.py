"""A JSON client for the agent API that sends a Bearer key."""

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.test import Client


@dataclass
class ApiClient:
    key: str | None
    client: Client

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def get(self, path: str, params: dict | None = None):
        return self.client.get(f"/api/v1{path}", params or {}, headers=self._headers())

    def post(self, path: str, body: Any = None, *, raw: str | bytes | None = None):
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self.client.post(
            f"/api/v1{path}", data, content_type="application/json", headers=self._headers()
        )

    def patch(self, path: str, body: Any):
        return self.client.patch(
            f"/api/v1{path}",
            json.dumps(body),
            content_type="application/json",
            headers=self._headers(),
        )

    def put(self, path: str, body: Any):
        return self.client.put(
            f"/api/v1{path}",
            json.dumps(body),
            content_type="application/json",
            headers=self._headers(),
        )

    def delete(self, path: str):
        return self.client.delete(f"/api/v1{path}", headers=self._headers())


def ok(response, status: int = 200) -> Any:
    """The JSON body of an answer that must have `status` (its content in the failure)."""
    assert response.status_code == status, response.content
    return response.json()


def timed_messages(start, turns: list[dict]) -> dict:
    """An append body of `turns`, one minute apart from `start`."""
    return {
        "messages": [
            {**t, "created_at": (start + timedelta(minutes=i)).isoformat()}
            for i, t in enumerate(turns)
        ]
    }
