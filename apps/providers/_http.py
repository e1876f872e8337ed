"""JSON over HTTP for the OpenAI-compatible providers, on the standard library only.

Every failure surfaces as one HttpFailure whose `kind` lets each provider map it onto its
own error classes. A Cancellation lets another thread abandon a request: it shuts the
request's socket down, so the server sees the client go away instead of answering nobody.
"""

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Literal

FailureKind = Literal["timeout", "connection", "status", "body", "cancelled"]

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_ERROR_SNIPPET_CHARS = 300
# Error bodies are kept this long for providers that read them (e.g. which parameter a 400
# rejects); the message shows only the snippet.
_ERROR_DETAIL_BYTES = 4096


class HttpFailure(Exception):
    """A request that produced no usable JSON: timed out, unreachable, error status, bad body
    or cancelled; `detail` is the start of an error status's body."""

    def __init__(
        self, kind: FailureKind, message: str, *, status: int | None = None, detail: str = ""
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.detail = detail


class Cancellation:
    """A handle another thread uses to abandon requests: cancel() shuts their sockets down.

    A request started after cancel() fails at once; one in flight fails within a socket read.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)

    def _attach(self, sock: socket.socket) -> None:
        with self._lock:
            if not self._cancelled:
                self._sockets.append(sock)
                return
        _shut(sock)


def _shut(sock: socket.socket) -> None:
    # shutdown(), unlike close(), wakes a thread blocked in recv() on the same socket and
    # sends the FIN at once. The plain socket's method, also for TLS: the reading thread
    # still owns the SSL object.
    with contextlib.suppress(OSError):  # already closed, or never connected
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _opener(cancel: Cancellation) -> urllib.request.OpenerDirector:
    """urllib's opener (proxies included) whose connections register with `cancel`."""

    class _HTTPConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            cancel._attach(self.sock)

    class _HTTPSConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            cancel._attach(self.sock)

    # do_open() is where urllib names the connection class; the rest (proxies, TLS context)
    # stays urllib's own.
    class _HTTPHandler(urllib.request.HTTPHandler):
        def do_open(
            self,
            http_class: object,
            req: urllib.request.Request,
            **kwargs: Any,  # Any: urllib's handler keyword arguments
        ) -> http.client.HTTPResponse:
            return super().do_open(_HTTPConnection, req, **kwargs)

    class _HTTPSHandler(urllib.request.HTTPSHandler):
        def do_open(
            self,
            http_class: object,
            req: urllib.request.Request,
            **kwargs: Any,  # Any: urllib's handler keyword arguments
        ) -> http.client.HTTPResponse:
            return super().do_open(_HTTPSConnection, req, **kwargs)

    return urllib.request.build_opener(_HTTPHandler(), _HTTPSHandler())


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


def post_json(
    url: str,
    payload: dict[str, Any],  # Any: the request's JSON body
    *,
    api_key: str,
    timeout: float,
    cancel: Cancellation | None = None,
) -> Any:  # Any: the server's JSON answer (json.loads' own type)
    """POST `payload` as JSON and return the decoded JSON answer; raises HttpFailure.

    `cancel`, when given, can abandon the request from another thread (kind "cancelled").
    """
    check_base_url(url)  # urlopen would also follow file: and custom schemes
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(  # noqa: S310 - http(s) only, checked above
        url, data=json.dumps(payload).encode(), headers=headers, method="POST"
    )
    if cancel is not None and cancel.cancelled:
        raise HttpFailure("cancelled", f"request to {url} cancelled before it was sent")
    urlopen = _opener(cancel).open if cancel is not None else urllib.request.urlopen
    deadline = time.monotonic() + timeout
    try:
        with urlopen(request, timeout=timeout) as response:
            raw = _read_body(response, deadline)
    except urllib.error.HTTPError as exc:
        try:
            body = exc.read(_ERROR_DETAIL_BYTES)
        except (OSError, http.client.HTTPException):
            body = b""
        detail = _snippet(body)
        message = f"HTTP {exc.code} from {url}" + (f": {detail}" if detail else "")
        raise HttpFailure(
            "status", message, status=exc.code, detail=body.decode("utf-8", "replace")
        ) from exc
    except (OSError, http.client.HTTPException) as exc:
        raise _failure(url, timeout, exc, cancel) from exc
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HttpFailure("body", f"{url} answered non-JSON: {_snippet(raw)!r}") from exc


def _failure(
    url: str, timeout: float, exc: BaseException, cancel: Cancellation | None
) -> HttpFailure:
    if cancel is not None and cancel.cancelled:
        # Whatever the shut socket raised (reset, EOF, bad status line), it was us.
        return HttpFailure("cancelled", f"request to {url} cancelled")
    if isinstance(exc, urllib.error.URLError):
        if isinstance(exc.reason, TimeoutError):
            return HttpFailure("timeout", f"no answer from {url} within {timeout:g} s")
        return HttpFailure("connection", f"cannot reach {url}: {exc.reason}")
    if isinstance(exc, TimeoutError):
        return HttpFailure("timeout", f"no answer from {url} within {timeout:g} s")
    # RemoteDisconnected, ConnectionResetError, BadStatusLine...: the server dropped us.
    return HttpFailure("connection", f"connection to {url} failed: {type(exc).__name__}: {exc}")
