"""The chat-model interface and its error classes."""

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class LLMError(Exception):
    """A chat completion failed; `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LLMTimeout(LLMError):
    """No complete answer within the timeout."""


class LLMUnavailable(LLMError):
    """The server could not be reached, dropped the connection, or answered 5xx or 429."""


class LLMBadResponse(LLMError):
    """The server answered 200 with a body that is not a usable completion."""


@dataclass(frozen=True)
class ChatMessage:
    """One message of a prompt; `role` is "system", "user" or "assistant"."""

    role: str
    content: str


@dataclass(frozen=True)
class LLMResult:
    """A completion and what it cost.

    Token counts come from the server's `usage`; when it sends none they are offline
    estimates (apps.providers.tokens) and `usage_estimated` is True.
    """

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: int
    finish_reason: str | None = None
    usage_estimated: bool = False


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completion model; callers fall back to extractive code when none is configured."""

    name: str

    def complete(
        self,
        messages: list[ChatMessage],
        *,
        timeout: float | None = None,
        response_format_json: bool = False,
    ) -> LLMResult:
        """The model's reply to `messages`; raises an LLMError subclass on failure."""
        ...
