"""Chat completions from any OpenAI-compatible server (`POST {URL}/chat/completions`).

Structured output is negotiated: a call with a JSON Schema asks in the strongest form
(STRUCTURED_MODES); a 400/422 that rejects the response_format (or a 500 whose body names
it, as llama-cpp-python answers) retries the call one mode weaker, and the rejection is
remembered for that server and model in this process.
"""

import logging
import re
import threading
import time
from dataclasses import replace
from typing import Any, Unpack

from apps.providers._http import HttpFailure, check_base_url, post_json
from apps.providers.guard import check_outside_transaction
from apps.providers.llm.base import (
    JSON_OBJECT,
    JSON_OBJECT_SCHEMA,
    JSON_SCHEMA,
    PROMPT,
    STRUCTURED_MODES,
    ChatMessage,
    CompleteOptions,
    LLMBadResponse,
    LLMError,
    LLMResult,
    LLMTimeout,
    LLMUnavailable,
)
from apps.providers.token_counts import count_tokens, count_tokens_batch

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0  # seed 004: consolidation must not block a caller longer than 30 s
# Sent when neither the call nor MAX_TOKENS says: without a bound one call can generate until
# the model's context is full, and a single-threaded local server serves nothing else.
DEFAULT_MAX_TOKENS = 1024
AUTO = "auto"
STRUCTURED_SETTINGS = (AUTO, *STRUCTURED_MODES)
_SCHEMA_MODES = (JSON_SCHEMA, JSON_OBJECT_SCHEMA)
# OpenAI's rule for json_schema names; other servers accept it too.
_SCHEMA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# A 400/422 counts as a rejection of response_format only if its body names it: a prompt
# over the context (also a 400) must not cost the server its structured output for good.
_REJECTION_STATUSES = (400, 422)
_REJECTION_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")
# llama-cpp-python's server (0.3.x) answers a json_schema response_format with a 500 whose
# body is its validation error ("loc": ("body", "response_format", "type")). A 500 counts as
# a rejection only when its body names response_format or json_schema: any other 500 is the
# server failing (LLMUnavailable), not refusing the format.
_SERVER_ERROR_REJECTION_WORDS = ("response_format", "json_schema")

# Modes each (base URL, model) rejected in this process: later calls start below them.
_rejected: dict[tuple[str, str], set[str]] = {}
_rejected_lock = threading.Lock()

_ROLES = ("system", "user", "assistant")


def _error_for(exc: HttpFailure) -> LLMError:
    if exc.kind in ("timeout", "cancelled"):
        return LLMTimeout(str(exc))
    if exc.kind == "connection":
        return LLMUnavailable(str(exc))
    if exc.kind == "body":
        return LLMBadResponse(str(exc), status=exc.status)
    if exc.status is not None and (exc.status >= 500 or exc.status == 429):
        # Overloaded, rate-limited or down: worth retrying later, unlike a 4xx.
        return LLMUnavailable(str(exc), status=exc.status)
    return LLMError(str(exc), status=exc.status)


def forget_learned_modes() -> None:
    """Forget which modes servers rejected (e.g. after upgrading the model server)."""
    with _rejected_lock:
        _rejected.clear()


def _positive_tokens(value: Any, what: str) -> int:  # Any: a value of the server's JSON answer
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return value


# Any: a JSON schema, checked here
def _check_call(messages: list[ChatMessage], schema: Any, schema_name: str) -> None:
    if not messages:
        raise ValueError("complete() needs at least one message")
    for message in messages:
        if message.role not in _ROLES:
            raise ValueError(f"unknown chat role {message.role!r}")
    if schema is not None and not isinstance(schema, dict):
        raise ValueError(f"schema must be a JSON Schema dict, got {type(schema).__name__}")
    if not _SCHEMA_NAME.fullmatch(schema_name):
        raise ValueError(f"schema_name must match [A-Za-z0-9_-]{{1,64}}, got {schema_name!r}")


def _ladder(has_schema: bool) -> tuple[str, ...]:
    """The modes a call may use, strongest first; the schema modes need a schema."""
    if has_schema:
        return STRUCTURED_MODES
    return tuple(m for m in STRUCTURED_MODES if m not in _SCHEMA_MODES)


def _rejects_response_format(exc: HttpFailure) -> bool:
    """Whether a failed call that carried a response_format was refused for it."""
    if exc.kind != "status":
        return False
    body = (exc.detail or str(exc)).lower()
    if exc.status in _REJECTION_STATUSES:
        return any(word in body for word in _REJECTION_WORDS)
    if exc.status == 500:
        return any(word in body for word in _SERVER_ERROR_REJECTION_WORDS)
    return False


class OpenAIChat:
    """A chat model behind an OpenAI-compatible API (OpenAI, vLLM, llama.cpp, Ollama...).

    Errors map onto LLMTimeout, LLMUnavailable (unreachable, dropped, 5xx, 429),
    LLMBadResponse (200 without a usable completion) and LLMError (other 4xx).
    """

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        temperature: float | None = None,
        max_tokens: int | None = None,
        structured: str = AUTO,
    ) -> None:
        if not model:
            raise ValueError("MODEL is required")
        if float(timeout) <= 0:
            raise ValueError(f"TIMEOUT must be positive, got {timeout!r}")
        if structured not in STRUCTURED_SETTINGS:
            raise ValueError(f"STRUCTURED must be one of {STRUCTURED_SETTINGS}, got {structured!r}")
        self.url = check_base_url(url)
        self.name = str(model)
        self.timeout = float(timeout)
        # Unset means the server's default; sent only when configured.
        self.temperature = temperature
        self.max_tokens = _positive_tokens(
            DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens, "MAX_TOKENS"
        )
        self.structured = structured
        self._api_key = str(api_key or "")

    def __repr__(self) -> str:  # no API key in logs
        return f"OpenAIChat(url={self.url!r}, model={self.name!r})"

    def check(self) -> str:
        """Describe the configuration; the server is not contacted."""
        return f"{self.name} via {self.url}/chat/completions (not contacted)"

    def complete(
        self, messages: list[ChatMessage], **options: Unpack[CompleteOptions]
    ) -> LLMResult:
        """The model's reply to `messages`; raises an LLMError subclass on failure.

        `schema` or `response_format_json` ask for JSON in the strongest mode the server
        takes; `max_tokens` overrides MAX_TOKENS; `cancel` abandons the call (LLMTimeout).
        """
        check_outside_transaction(f"{self.name} chat completion")
        schema, schema_name = options.get("schema"), options.get("schema_name", "answer")
        max_tokens, cancel = options.get("max_tokens"), options.get("cancel")
        _check_call(messages, schema, schema_name)
        limit = _positive_tokens(
            self.max_tokens if max_tokens is None else max_tokens, "max_tokens"
        )
        budget = options.get("timeout") or self.timeout
        deadline = time.monotonic() + budget
        endpoint = f"{self.url}/chat/completions"
        wants_json = options.get("response_format_json", False)
        mode = self._first_mode(wants_json=wants_json, has_schema=schema is not None)
        rejected: list[str] = []
        started = time.monotonic()
        while True:
            payload = self._payload(messages, mode, schema, schema_name, limit)
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise HttpFailure("timeout", "no time left for a retry")
                answer = post_json(
                    endpoint, payload, api_key=self._api_key, timeout=remaining, cancel=cancel
                )
                break
            except HttpFailure as exc:
                weaker = self._weaker_mode(mode, exc, has_schema=schema is not None)
                if weaker is None:
                    if exc.kind == "timeout":
                        raise LLMTimeout(f"no answer from {endpoint} within {budget:g} s") from exc
                    raise _error_for(exc) from exc
                self._remember_rejection(mode, exc, weaker)
                rejected.append(mode)
                mode = weaker
        latency_ms = round((time.monotonic() - started) * 1000)
        result = self._result(answer, endpoint, messages, latency_ms)
        return replace(result, structured_mode=mode, rejected_modes=tuple(rejected))

    def _first_mode(self, *, wants_json: bool, has_schema: bool) -> str:
        """The mode a call starts in: pinned, or the strongest not yet rejected here."""
        if not (wants_json or has_schema):
            return PROMPT  # a prose answer: nothing to constrain
        if self.structured != AUTO:
            if self.structured in _SCHEMA_MODES and not has_schema:
                return JSON_OBJECT  # the nearest form that needs no schema
            return self.structured
        with _rejected_lock:
            rejected = set(_rejected.get((self.url, self.name), ()))
        for mode in _ladder(has_schema):
            if mode not in rejected:
                return mode
        return PROMPT

    def _weaker_mode(self, mode: str, exc: HttpFailure, *, has_schema: bool) -> str | None:
        """The mode to retry in if `exc` rejects `mode`'s response_format; None: no retry."""
        if self.structured != AUTO or mode == PROMPT or not _rejects_response_format(exc):
            return None
        ladder = _ladder(has_schema)
        return ladder[ladder.index(mode) + 1]

    def _remember_rejection(self, mode: str, exc: HttpFailure, weaker: str) -> None:
        with _rejected_lock:
            _rejected.setdefault((self.url, self.name), set()).add(mode)
        logger.warning(
            "%s at %s rejected response_format %s (HTTP %s); using %s from now on",
            self.name,
            self.url,
            mode,
            exc.status,
            weaker,
        )

    def _payload(
        self,
        messages: list[ChatMessage],
        mode: str,
        schema: dict[str, Any] | None,  # Any: a JSON schema (JSON values)
        schema_name: str,
        max_tokens: int,
    ) -> dict[str, Any]:  # Any: the request's JSON body
        payload: dict[str, Any] = {
            "model": self.name,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
        }
        if self.temperature is not None:
            payload["temperature"] = float(self.temperature)
        if mode == JSON_SCHEMA:
            # strict would make OpenAI refuse schemas outside its subset (every property
            # required, no defaults); the other servers ignore it.
            spec = {"name": schema_name, "schema": schema, "strict": False}
            payload["response_format"] = {"type": "json_schema", "json_schema": spec}
        elif mode == JSON_OBJECT_SCHEMA:
            payload["response_format"] = {"type": "json_object", "schema": schema}
        elif mode == JSON_OBJECT:
            payload["response_format"] = {"type": "json_object"}
        return payload

    def _result(
        self,
        answer: Any,  # Any: the server's JSON answer (json.loads' own type)
        endpoint: str,
        messages: list[ChatMessage],
        latency_ms: int,
    ) -> LLMResult:
        if not isinstance(answer, dict):
            raise LLMBadResponse(f"{endpoint} answered JSON that is not an object")
        if "error" in answer and "choices" not in answer:
            raise LLMBadResponse(f"{endpoint} answered an error: {str(answer['error'])[:300]}")
        choices = answer.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LLMBadResponse(f"{endpoint} answered without choices")
        message = choices[0].get("message")
        text = message.get("content") if isinstance(message, dict) else None
        if not isinstance(text, str):
            raise LLMBadResponse(f"{endpoint} answered a choice without text content")
        usage = answer.get("usage")
        if not isinstance(usage, dict):
            usage = {}
        input_tokens = usage.get("prompt_tokens")
        output_tokens = usage.get("completion_tokens")
        if isinstance(input_tokens, int) and isinstance(output_tokens, int):
            estimated = False
        else:  # no usage from the server: counted here
            estimated = True
            input_tokens = sum(count_tokens_batch([m.content for m in messages]))
            output_tokens = count_tokens(text)
        finish_reason = choices[0].get("finish_reason")
        return LLMResult(
            text=text,
            model=str(answer.get("model") or self.name),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            latency_ms=latency_ms,
            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            usage_estimated=estimated,
        )
