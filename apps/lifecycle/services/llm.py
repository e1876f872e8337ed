"""One bounded LLM call: the answer, or why there is none, within a hard time limit.

The HTTP client's timeout applies per socket operation, so a server that trickles its answer
can hold it longer; seed 004's consolidationTimeout bounds the whole call. The call runs in
a daemon thread and the caller waits at most `timeout` seconds for it (Promise.race in the
seed). A call left running after its timeout ends on its own socket timeout.
"""

import threading
import time
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

from apps.providers.guard import check_outside_transaction
from apps.providers.llm import ChatMessage, LLMError, LLMResult, LLMTimeout, get_chat_model

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

    @property
    def ok(self) -> bool:
        return self.status == OK


# What a step records when it fell back because no model is configured.
NO_LLM = Answer(NOT_CONFIGURED, error="no LLM is configured")


def llm_configured() -> bool:
    try:
        return get_chat_model() is not None
    except ImproperlyConfigured:
        return True  # configured, wrongly: calls fail and say why


def ask(messages: list[ChatMessage], *, timeout: float) -> Answer:
    """Ask the configured chat model; never raises for the model's failures."""
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

    def call() -> None:
        try:
            box["result"] = model.complete(messages, timeout=timeout)
        except Exception as exc:  # handed to the waiting thread, which reports it
            box["error"] = exc

    started = time.monotonic()
    worker = threading.Thread(target=call, name="lifecycle-llm", daemon=True)
    worker.start()
    worker.join(timeout)
    latency = round((time.monotonic() - started) * 1000)
    if worker.is_alive() or isinstance(box.get("error"), LLMTimeout):
        # Whichever noticed first (this wait, or the client's socket timeout), the same.
        return Answer(
            TIMEOUT, model=model.name, latency_ms=latency, error=f"no answer within {timeout:.3g} s"
        )
    error = box.get("error")
    if isinstance(error, LLMError):
        return Answer(FAILED, model=model.name, latency_ms=latency, error=str(error)[:2000])
    if error is not None:
        return Answer(
            FAILED,
            model=model.name,
            latency_ms=latency,
            error=f"{type(error).__name__}: {error}"[:2000],
        )
    result: LLMResult = box["result"]
    return Answer(
        OK,
        text=result.text,
        model=result.model,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        latency_ms=latency,
    )
