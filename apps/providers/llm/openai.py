"""Chat completions from any OpenAI-compatible server (`POST {URL}/chat/completions`)."""

import time
from typing import Any

from apps.providers._http import HttpFailure, check_base_url, post_json
from apps.providers.guard import check_outside_transaction
from apps.providers.llm.base import (
    ChatMessage,
    LLMBadResponse,
    LLMError,
    LLMResult,
    LLMTimeout,
    LLMUnavailable,
)

DEFAULT_TIMEOUT = 30.0  # seed 004: consolidation must not block a caller longer than 30 s

_ROLES = ("system", "user", "assistant")


def _error_for(exc: HttpFailure) -> LLMError:
    if exc.kind == "timeout":
        return LLMTimeout(str(exc))
    if exc.kind == "connection":
        return LLMUnavailable(str(exc))
    if exc.kind == "body":
        return LLMBadResponse(str(exc), status=exc.status)
    if exc.status is not None and (exc.status >= 500 or exc.status == 429):
        # Overloaded, rate-limited or down: worth retrying later, unlike a 4xx.
        return LLMUnavailable(str(exc), status=exc.status)
    return LLMError(str(exc), status=exc.status)


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
    ) -> None:
        if not model:
            raise ValueError("MODEL is required")
        if float(timeout) <= 0:
            raise ValueError(f"TIMEOUT must be positive, got {timeout!r}")
        self.url = check_base_url(url)
        self.name = str(model)
        self.timeout = float(timeout)
        # Unset means the server's default; sent only when configured.
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._api_key = str(api_key or "")

    def __repr__(self) -> str:  # no API key in logs
        return f"OpenAIChat(url={self.url!r}, model={self.name!r})"

    def check(self) -> str:
        """Describe the configuration; the server is not contacted."""
        return f"{self.name} via {self.url}/chat/completions (not contacted)"

    def complete(
        self,
        messages: list[ChatMessage],
        *,
        timeout: float | None = None,
        response_format_json: bool = False,
    ) -> LLMResult:
        """The model's reply to `messages`; raises an LLMError subclass on failure."""
        check_outside_transaction(f"{self.name} chat completion")
        if not messages:
            raise ValueError("complete() needs at least one message")
        for message in messages:
            if message.role not in _ROLES:
                raise ValueError(f"unknown chat role {message.role!r}")
        payload: dict[str, Any] = {
            "model": self.name,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        if self.temperature is not None:
            payload["temperature"] = float(self.temperature)
        if self.max_tokens is not None:
            payload["max_tokens"] = int(self.max_tokens)
        if response_format_json:
            payload["response_format"] = {"type": "json_object"}
        endpoint = f"{self.url}/chat/completions"
        started = time.monotonic()
        try:
            answer = post_json(
                endpoint, payload, api_key=self._api_key, timeout=timeout or self.timeout
            )
        except HttpFailure as exc:
            raise _error_for(exc) from exc
        latency_ms = round((time.monotonic() - started) * 1000)
        return self._result(answer, endpoint, messages, latency_ms)

    def _result(
        self, answer: Any, endpoint: str, messages: list[ChatMessage], latency_ms: int
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
        usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        input_tokens = usage.get("prompt_tokens")
        output_tokens = usage.get("completion_tokens")
        estimated = not (isinstance(input_tokens, int) and isinstance(output_tokens, int))
        if estimated:
            from apps.providers.tokens import count_tokens, count_tokens_batch

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
