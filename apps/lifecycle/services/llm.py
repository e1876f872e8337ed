"""One bounded LLM call: the answer, or why there is none, within a hard time limit.

The HTTP client's timeout applies per socket operation, so a server that trickles its answer
can hold it longer; seed 004's consolidationTimeout bounds the whole call. The call runs in
a daemon thread and the caller waits at most `timeout` seconds for it (Promise.race in the
seed). When the wait gives up it cancels the call, which shuts its socket down: the server
sees the client go away (and may stop generating) instead of answering nobody later.
"""

import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from apps.providers.guard import check_outside_transaction
from apps.providers.llm import (
    Cancellation,
    ChatMessage,
    LLMError,
    LLMResult,
    LLMTimeout,
    get_chat_model,
)

OK = "ok"
NOT_CONFIGURED = "not_configured"
TIMEOUT = "timeout"
FAILED = "failed"


@dataclass(frozen=True)
class Answer:
    """`status` is ok, not_configured, timeout or failed; `text` is set when ok."""

    status: str
    text: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    error: str = ""
    mode: str = ""  # how structured output was asked for (apps.providers.llm.STRUCTURED_MODES)
    truncated: bool = False  # the answer was cut off at max_tokens
    rejected: tuple[str, ...] = ()  # stronger modes the server refused on this call

    @property
    def structured(self) -> dict | None:
        """What a run's details say when the provider stepped down a mode on this call."""
        if not self.rejected:
            return None
        return {"mode": self.mode, "rejected": list(self.rejected)}

    @property
    def ok(self) -> bool:
        return self.status == OK

    @classmethod
    def of(cls, result: LLMResult, *, latency_ms: int) -> "Answer":
        """The ok answer of a completion; `latency_ms` is the caller's whole wait."""
        return cls(
            OK,
            latency_ms=latency_ms,
            mode=result.structured_mode,
            rejected=tuple(result.rejected_modes),
            **{name: getattr(result, name) for name in _AS_IS},
        )


# What an ok Answer takes from the LLMResult as it is.
_AS_IS = ("text", "model", "input_tokens", "output_tokens", "truncated")


# What a step records when it fell back because no model is configured.
NO_LLM = Answer(NOT_CONFIGURED, error="no LLM is configured")


def llm_configured() -> bool:
    try:
        return get_chat_model() is not None
    except ImproperlyConfigured:
        return True  # configured, wrongly: calls fail and say why


# The socket's own timeout is a backstop behind the wait below, which cancels the call.
_SOCKET_BACKSTOP_SECONDS = 5.0


def ask(
    messages: list[ChatMessage],
    *,
    timeout: float,
    schema: dict[str, Any] | None = None,  # Any: a JSON schema's values
    schema_name: str = "answer",
    max_tokens: int | None = None,
) -> Answer:
    """Ask the configured chat model; never raises for the model's failures. `schema` asks
    for a JSON answer of that shape; `max_tokens` bounds it (else the model's MAX_TOKENS)."""
    # The call runs in another thread, where the provider's own guard cannot see this
    # thread's transaction: check here.
    check_outside_transaction("lifecycle LLM call")
    try:
        model = get_chat_model()
    except ImproperlyConfigured as exc:
        return Answer(FAILED, error=f"LLM misconfigured: {exc}")
    if model is None:
        return NO_LLM
    timeout = max(float(timeout), 0.001)
    box: dict = {}
    cancel = Cancellation()

    def call() -> None:
        try:
            box["result"] = model.complete(
                messages,
                timeout=timeout + _SOCKET_BACKSTOP_SECONDS,
                schema=schema,
                schema_name=schema_name,
                max_tokens=max_tokens,
                cancel=cancel,
            )
        except Exception as exc:  # handed to the waiting thread, which reports it
            box["error"] = exc

    started = time.monotonic()
    worker = threading.Thread(target=call, name="lifecycle-llm", daemon=True)
    worker.start()
    worker.join(timeout)
    latency = round((time.monotonic() - started) * 1000)
    waited_out = worker.is_alive()
    if waited_out:
        cancel.cancel()
    return _answer(box, model=model.name, timeout=timeout, latency=latency, waited_out=waited_out)


def _answer(box: dict, *, model: str, timeout: float, latency: int, waited_out: bool) -> Answer:
    """What the call left in `box` (its result or its error), as an Answer."""
    said = partial(Answer, model=model, latency_ms=latency)
    error = box.get("error")
    if waited_out or isinstance(error, LLMTimeout):
        # Whichever noticed first (this wait, or the client's socket timeout), the same.
        return said(TIMEOUT, error=f"no answer within {timeout:.3g} s")
    if isinstance(error, LLMError):
        return said(FAILED, error=str(error)[:2000])
    if error is not None:
        return said(FAILED, error=f"{type(error).__name__}: {error}"[:2000])
    return Answer.of(box["result"], latency_ms=latency)
