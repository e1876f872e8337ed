"""Token and time bounds of LLM calls, from the settings (issue 23).

Prompt sizes are offline estimates (apps.providers.token_counts counts WordPiece tokens, not the
model's own), so the budget keeps a margin for the difference and for the chat template.
"""

from collections.abc import Sequence

from apps.providers.llm.base import ChatMessage
from apps.providers.token_counts import count_tokens_batch

DEFAULT_CONTEXT_TOKENS = 8192  # when the model's window is unknown (issue 23)
DEFAULT_BACKGROUND_TIMEOUT = 600.0
# Per message: the chat template's role markers and separators (a few tokens in every
# template seen: ChatML, Llama 3, Mistral).
MESSAGE_OVERHEAD_TOKENS = 8
# Of the window, kept free because the counter is not the model's tokenizer. An allowance,
# not a measurement: compare with the server's usage.prompt_tokens before trusting it.
MARGIN_FRACTION = 0.10
MIN_MARGIN_TOKENS = 64


def context_tokens() -> int:
    """The model's context window in tokens (MEMORYHUB_LLM_CONTEXT_TOKENS)."""
    from django.conf import settings

    return int(getattr(settings, "MEMORYHUB_LLM_CONTEXT_TOKENS", DEFAULT_CONTEXT_TOKENS))


def background_timeout() -> float:
    """Seconds a background lifecycle call may take (MEMORYHUB_LLM_BACKGROUND_TIMEOUT)."""
    from django.conf import settings

    return float(getattr(settings, "MEMORYHUB_LLM_BACKGROUND_TIMEOUT", DEFAULT_BACKGROUND_TIMEOUT))


def margin_tokens(window: int) -> int:
    """Tokens of the window left unused for the estimate's error."""
    return max(MIN_MARGIN_TOKENS, int(window * MARGIN_FRACTION))


def prompt_budget(max_output_tokens: int, *, window: int | None = None) -> int:
    """The most prompt tokens (as messages_tokens counts them) that fit beside
    `max_output_tokens` of output; 0 when not even an empty prompt fits."""
    if max_output_tokens < 0:
        raise ValueError(f"max_output_tokens must be >= 0, got {max_output_tokens!r}")
    window = context_tokens() if window is None else int(window)
    return max(0, window - max_output_tokens - margin_tokens(window))


def messages_tokens(messages: Sequence[ChatMessage]) -> int:
    """The estimated prompt size of `messages`, template overhead included."""
    contents = count_tokens_batch([m.content for m in messages])
    return sum(contents) + MESSAGE_OVERHEAD_TOKENS * len(contents)


def prompt_fits(
    messages: Sequence[ChatMessage], max_output_tokens: int, *, window: int | None = None
) -> bool:
    """Whether `messages` plus `max_output_tokens` of output fit the model's window."""
    return messages_tokens(messages) <= prompt_budget(max_output_tokens, window=window)
