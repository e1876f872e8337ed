"""A real HTTP server on 127.0.0.1 that answers from a script, for the client's retries.

Every request takes the next script item (an empty script answers 500, so a request nobody
expected fails loudly):

    Answer(status, body=None, headers={})   a JSON answer
    Raw(status, data)                       a body that is not JSON (a proxy's error page)
    Drop()                                  close the connection without answering
    Forward()                               send the request on to `upstream` (the live
                                            server) and relay its answer
    ForwardThenDrop()                       send it on, then close the connection without
                                            relaying: the server did the work, the client
                                            never hears of it
    Delay(seconds, then)                    wait, then answer `then`

Drop, Delay and the serving thread are the LLM server's (tests/support/llm_server.py).
`.requests` records every request (method, path with query, JSON body, monotonic time).
"""

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from tests.support.llm_server import Delay, Drop, serve


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Raw:
    status: int
    data: bytes


@dataclass(frozen=True)
class Forward:
    pass


@dataclass(frozen=True)
class ForwardThenDrop:
    pass


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    body: Any
    at: float


@dataclass
class Loopback:
    url: str = ""
    upstream: str = ""
    requests: list[Seen] = field(default_factory=list)
    _script: deque = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)

    def script(self, *items: Any) -> None:
        with self._lock:
            self._script.extend(items)

    def _next(self, seen: Seen) -> Any:
        with self._lock:
            self.requests.append(seen)
            return self._script.popleft() if self._script else None


class _Handler(BaseHTTPRequestHandler):
    state: Loopback  # set on the subclass made per server
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args) -> None:
        pass

    def _handle(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        item = self.state._next(Seen(self.command, self.path, body, time.monotonic()))
        if isinstance(item, Delay):
            self.state._stopping.wait(item.seconds)
            item = item.then
        if isinstance(item, Drop):
            self._drop()
        elif isinstance(item, (Forward, ForwardThenDrop)):
            upstream = self._forward(raw)
            if isinstance(item, ForwardThenDrop):
                self._drop()
            else:
                self._send(upstream.status_code, upstream.content, dict(upstream.headers))
        elif isinstance(item, Raw):
            self._send(item.status, item.data, {"Content-Type": "text/html"})
        elif isinstance(item, Answer):
            data = json.dumps(item.body).encode() if item.body is not None else b""
            self._send(item.status, data, {"Content-Type": "application/json", **item.headers})
        else:
            self._send(500, b'{"detail": "loopback: script exhausted"}', {})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def _forward(self, raw: bytes) -> httpx.Response:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host",)}
        return httpx.request(
            self.command, self.state.upstream + self.path, content=raw, headers=headers
        )

    def _drop(self) -> None:
        self.close_connection = True
        self.connection.shutdown(2)  # SHUT_RDWR: the client sees the connection go

    def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        skip = {"content-length", "transfer-encoding", "connection", "date", "server"}
        for name, value in headers.items():
            if name.lower() not in skip:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    """A fresh scripted server for one test."""
    state = Loopback()
    handler = type("Handler", (_Handler,), {"state": state})
    with serve(handler, state._stopping, "loopback") as url:
        state.url = url
        yield state
