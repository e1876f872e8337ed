"""JSON over HTTP for the OpenAI-compatible providers, on the standard library only.

Every failure surfaces as one HttpFailure whose `kind` lets each provider map it onto its
own error classes.
"""

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Literal

FailureKind = Literal["timeout", "connection", "status", "body"]

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_ERROR_SNIPPET_CHARS = 300


class HttpFailure(Exception):
    """A request that produced no usable JSON: timed out, unreachable, error status or bad body."""

    def __init__(self, kind: FailureKind, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


def check_base_url(url: str) -> str:
    """The base URL without a trailing slash; only http(s) is accepted (urllib also opens file:)."""
    parsed = urllib.parse.urlsplit(str(url))
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"URL must be an http(s) URL such as http://host:port/v1, got {url!r}")
    return str(url).rstrip("/")


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    if len(text) > _ERROR_SNIPPET_CHARS:
        text = text[:_ERROR_SNIPPET_CHARS] + "…"
    return text


def _read_body(response: http.client.HTTPResponse, deadline: float) -> bytes:
    # read1() returns after at most one socket read, so a server that trickles bytes cannot
    # hold us much past the deadline (each socket read still waits up to `timeout`).
    chunks, size = [], 0
    while chunk := response.read1(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise HttpFailure("body", f"response larger than {MAX_RESPONSE_BYTES} bytes")
        if time.monotonic() > deadline:
            raise TimeoutError("response body not received within the timeout")
    return b"".join(chunks)


def post_json(url: str, payload: dict[str, Any], *, api_key: str, timeout: float) -> Any:
    """POST `payload` as JSON and return the decoded JSON answer; raises HttpFailure."""
    check_base_url(url)  # urlopen would also follow file: and custom schemes
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(  # noqa: S310 - http(s) only, checked above
        url, data=json.dumps(payload).encode(), headers=headers, method="POST"
    )
    deadline = time.monotonic() + timeout
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            raw = _read_body(response, deadline)
    except urllib.error.HTTPError as exc:
        try:
            detail = _snippet(exc.read(_ERROR_SNIPPET_CHARS * 4))
        except (OSError, http.client.HTTPException):
            detail = ""
        message = f"HTTP {exc.code} from {url}" + (f": {detail}" if detail else "")
        raise HttpFailure("status", message, status=exc.code) from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise HttpFailure("timeout", f"no answer from {url} within {timeout:g} s") from exc
        raise HttpFailure("connection", f"cannot reach {url}: {exc.reason}") from exc
    except TimeoutError as exc:
        raise HttpFailure("timeout", f"no answer from {url} within {timeout:g} s") from exc
    except (OSError, http.client.HTTPException) as exc:
        # RemoteDisconnected, ConnectionResetError, BadStatusLine...: the server dropped us.
        raise HttpFailure(
            "connection", f"connection to {url} failed: {type(exc).__name__}: {exc}"
        ) from exc
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HttpFailure("body", f"{url} answered non-JSON: {_snippet(raw)!r}") from exc
