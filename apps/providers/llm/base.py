"""The chat-model interface and its error classes."""

from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, Unpack, runtime_checkable

from apps.providers._http import Cancellation

# How a call asks for structured output, strongest first (docs/providers.md).
JSON_SCHEMA = "json_schema"  # response_format json_schema: OpenAI, vLLM, Ollama /v1, llama-server
JSON_OBJECT_SCHEMA = "json_object_schema"  # json_object with a "schema": llama-cpp-python
JSON_OBJECT = "json_object"  # any JSON object, shape asked for in the prompt
PROMPT = "prompt"  # no response_format: the prompt alone
STRUCTURED_MODES = (JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT, PROMPT)


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
    estimates (apps.providers.token_counts) and `usage_estimated` is True.
    """

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: int
    finish_reason: str | None = None
    usage_estimated: bool = False
    # How the answer's shape was asked for (STRUCTURED_MODES), and the stronger modes this
    # call tried that the server rejected.
    structured_mode: str = PROMPT
    rejected_modes: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        """The answer was cut off at max_tokens (or the model's context)."""
        return self.finish_reason == "length"


class CompleteOptions(TypedDict, total=False):
    """ChatModel.complete's keyword arguments, each optional (its default after it)."""

    timeout: float | None  # None: the model's configured timeout
    response_format_json: bool  # False
    schema: dict[str, Any] | None  # None. Any: a JSON schema (JSON values)
    schema_name: str  # "answer"
    max_tokens: int | None  # None: the model's configured maximum
    cancel: Cancellation | None  # None


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completion model; callers fall back to extractive code when none is configured."""

    name: str

    def complete(
        self, messages: list[ChatMessage], **options: Unpack[CompleteOptions]
    ) -> LLMResult:
        """The model's reply to `messages`; raises an LLMError subclass on failure.

        `schema` (a JSON Schema) or `response_format_json` ask for a JSON answer; `cancel`
        lets another thread abandon the call (LLMTimeout)."""
        ...
