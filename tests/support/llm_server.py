"""A real OpenAI-compatible HTTP server on 127.0.0.1 that replays scripted answers.

Every POST takes the next item of the script. Chat completions with an empty script answer
500 so a missing script fails loudly; embeddings with an empty script come from `embed_fn`
(default: the deterministic HashEmbedder). Script items:

    "text"                        a completion whose message content is "text"
    Completion(text, ...)         the same with explicit token usage, model, finish reason
    Raw(body, status=200)         a raw body, e.g. malformed JSON
    Delay(seconds, then=None)     wait, then answer `then` (or the endpoint's default)
    Status(code, body="")         an HTTP error status
    Drop()                        close the connection without answering
    Embeddings(vectors)           an embeddings answer with these vectors
    Gate(then=None)               hold the answer until the test calls .open(): `.entered`
                                  is set when a request reaches it (ordering, not timing)
    Reply(fn)                     the item fn(request body) returns: an answer that depends
                                  on the prompt (a model that echoes, or routes by task)
    Generating(seconds, then=None)
                                  like Delay, but watching the connection the way a server
                                  that stops generating would: a client that goes away ends
                                  it early and sets `.disconnected` (`.entered` as for Gate)

Use the `llm_server` fixture: `.url` (ending in /v1), `.script(*items)`, `.requests`.
`.reject_formats(*modes)` makes the server answer 400 to chat requests whose response_format
is one of the modes (json_schema, json_object_schema, json_object), like a server that does
not support it; those requests consume no script item.
"""

import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from apps.providers.embeddings.fake import HashEmbedder
from apps.providers.llm.openai import forget_learned_modes


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None = 11
    completion_tokens: int | None = 7
    model: str | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Raw:
    body: str | bytes
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class Delay:
    seconds: float
    then: Any = None


@dataclass(frozen=True)
class Status:
    code: int
    body: str = ""


@dataclass(frozen=True)
class Drop:
    pass


@dataclass(frozen=True)
class Gate:
    """Holds its request until `open()`; proves what can happen while a call is in flight."""

    then: Any = None
    timeout: float = 30.0  # a safety net: a test that never opens it still ends
    entered: threading.Event = field(default_factory=threading.Event, compare=False)
    released: threading.Event = field(default_factory=threading.Event, compare=False)

    def open(self) -> None:
        self.released.set()


@dataclass(frozen=True)
class Generating:
    """Holds its request up to `seconds`, ending early when the client closes the connection."""

    seconds: float
    then: Any = None
    entered: threading.Event = field(default_factory=threading.Event, compare=False)
    disconnected: threading.Event = field(default_factory=threading.Event, compare=False)


@dataclass(frozen=True)
class Reply:
    fn: Callable[[Any], Any]
    repeat: bool = False  # True: answer every later request too (never consumed)


@dataclass(frozen=True)
class Embeddings:
    vectors: Sequence[Sequence[float]]


@dataclass(frozen=True)
class RecordedRequest:
    """What the server received; `body` is the parsed JSON or None."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    received_at: float = 0.0  # time.monotonic() when it arrived


@dataclass(frozen=True)
class Answered:
    """A request and when its answer was sent (time.monotonic())."""

    request: RecordedRequest
    at: float


def _hash_embed(texts: list[str]) -> list[list[float]]:
    return HashEmbedder().embed(texts)


@dataclass
class LLMServer:
    """The scripted server's state, shared with its request handler threads."""

    url: str = ""
    embed_fn: Callable[[list[str]], list[list[float]]] = _hash_embed
    requests: list[RecordedRequest] = field(default_factory=list)
    answered: list[Answered] = field(default_factory=list)
    rejected_formats: frozenset[str] = frozenset()
    _queue: deque = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)

    def script(self, *items: Any) -> None:
        """Append answers; each POST consumes one."""
        with self._lock:
            self._queue.extend(items)

    def reject_formats(self, *modes: str) -> None:
        """Answer 400 to chat requests whose response_format is one of `modes`."""
        unknown = set(modes) - {"json_schema", "json_object_schema", "json_object"}
        if unknown:
            raise ValueError(f"unknown response_format modes {sorted(unknown)}")
        with self._lock:
            self.rejected_formats = frozenset(modes)

    @property
    def pending(self) -> int:
        """Script items not yet consumed."""
        with self._lock:
            return len(self._queue)

    def _record(self, request: RecordedRequest, *, pop: bool) -> tuple[bool, Any]:
        with self._lock:
            self.requests.append(request)
            if pop and self._queue:
                item = self._queue[0]
                if not (isinstance(item, Reply) and item.repeat):
                    self._queue.popleft()
                return True, item
            return False, None

    @property
    def chats(self) -> list[RecordedRequest]:
        """The chat completion requests received, in order."""
        with self._lock:
            return [r for r in self.requests if r.path == "/v1/chat/completions"]


class _Handler(BaseHTTPRequestHandler):
    server_version = "memoryhub-test-llm/1"
    state: LLMServer  # set on the subclass made per server

    def log_message(self, format, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self._send(404, {"error": {"message": f"no GET {self.path}"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        request = RecordedRequest(
            method="POST",
            path=self.path,
            headers=dict(self.headers.items()),
            body=body,
            raw=raw,
            received_at=time.monotonic(),
        )
        if self.path not in ("/v1/chat/completions", "/v1/embeddings"):
            self.state._record(request, pop=False)  # a wrong path must not eat the script
            self._send(404, {"error": {"message": f"no POST {self.path}"}})
            return
        rejected = self.path == "/v1/chat/completions" and (
            _format_mode(body) in self.state.rejected_formats
        )
        has_item, item = self.state._record(request, pop=not rejected)
        if rejected:
            item, has_item = _format_rejection(_format_mode(body)), True
        self._answer(item if has_item else None, body)
        with self.state._lock:
            self.state.answered.append(Answered(request, time.monotonic()))

    def _answer(self, item: Any, body: Any) -> None:
        chat = self.path == "/v1/chat/completions"
        if isinstance(item, Reply):
            item = item.fn(body)
        if isinstance(item, Gate):
            item.entered.set()
            deadline = time.monotonic() + item.timeout
            while not item.released.wait(0.01):
                if self.state._stopping.is_set() or time.monotonic() > deadline:
                    break
            item = item.then
        if isinstance(item, Generating):
            item.entered.set()
            if self._client_left_within(item.seconds):
                item.disconnected.set()
                self.close_connection = True
                return
            item = item.then
        if isinstance(item, Delay):
            # Wakes early when the fixture shuts down, so teardown never waits out a delay.
            self.state._stopping.wait(item.seconds)
            item = item.then
        if isinstance(item, Drop):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif isinstance(item, Status):
            self._send(item.code, item.body.encode(), content_type="text/plain")
        elif isinstance(item, Raw):
            raw = item.body.encode() if isinstance(item.body, str) else item.body
            self._send(item.status, raw, content_type=item.content_type)
        elif isinstance(item, Embeddings):
            self._send(200, _embeddings_answer(body, item.vectors))
        elif isinstance(item, (str, Completion)):
            self._send(200, _completion_answer(body, item))
        elif item is None and chat:
            self._send(500, b"llm_server: script exhausted", content_type="text/plain")
        elif item is None:
            texts = (body or {}).get("input") or []
            self._send(200, _embeddings_answer(body, self.state.embed_fn(list(texts))))
        else:
            raise TypeError(f"unknown script item {item!r}")

    def _client_left_within(self, seconds: float) -> bool:
        """Wait up to `seconds` for the client to close the connection (EOF or reset)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.state._stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.01)
            if not readable:
                continue
            try:
                if self.connection.recv(1, socket.MSG_PEEK) == b"":
                    return True
            except OSError:
                return True
            time.sleep(0.01)  # bytes from the client: not a close, keep watching
        return False

    def _send(self, status: int, payload: Any, *, content_type: str = "application/json") -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); nothing to tell it


def _format_mode(body: Any) -> str:
    """The structured-output mode a chat request asked for ("prompt" when none)."""
    response_format = (body or {}).get("response_format") if isinstance(body, dict) else None
    if not isinstance(response_format, dict):
        return "prompt"
    if response_format.get("type") == "json_object" and "schema" in response_format:
        return "json_object_schema"
    return str(response_format.get("type"))


def _format_rejection(mode: str) -> Raw:
    # Shaped like OpenAI's error for an unsupported parameter value.
    message = f"response_format {mode!r} is not supported by this server"
    error = {"message": message, "type": "invalid_request_error", "param": "response_format"}
    return Raw(json.dumps({"error": error}), status=400)


def _completion_answer(body: Any, item: str | Completion) -> dict:
    item = Completion(item) if isinstance(item, str) else item
    answer: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": item.model or (body or {}).get("model") or "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": item.text},
                "finish_reason": item.finish_reason,
            }
        ],
    }
    if item.prompt_tokens is not None and item.completion_tokens is not None:
        answer["usage"] = {
            "prompt_tokens": item.prompt_tokens,
            "completion_tokens": item.completion_tokens,
            "total_tokens": item.prompt_tokens + item.completion_tokens,
        }
    return answer


def _embeddings_answer(body: Any, vectors: Sequence[Sequence[float]]) -> dict:
    return {
        "object": "list",
        "model": (body or {}).get("model") or "test-embedding",
        "data": [
            {"object": "embedding", "index": i, "embedding": list(v)} for i, v in enumerate(vectors)
        ],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler still sleeping in a Delay must not block exit

    def handle_error(self, request, client_address) -> None:
        pass  # clients that time out or vanish are the point of these tests


def unused_port_url() -> str:
    """A loopback base URL on which nothing listens (the port was just bound and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@contextmanager
def serve(
    handler: type[BaseHTTPRequestHandler], stopping: threading.Event, name: str
) -> Iterator[str]:
    """Serves `handler` on a free loopback port in a thread, yielding its base URL; on exit
    sets `stopping` (so a held request lets go) and shuts the server down."""
    server = _Server(("127.0.0.1", 0), handler)
    # A short poll interval keeps shutdown (and so each test's teardown) near-instant.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, name=name, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A fresh scripted OpenAI-compatible server for one test."""
    # What the provider learned about an earlier server on the same port is not this one's.
    forget_learned_modes()
    state = LLMServer()
    handler = type("Handler", (_Handler,), {"state": state})
    with serve(handler, state._stopping, "llm_server") as base:
        state.url = f"{base}/v1"
        yield state
