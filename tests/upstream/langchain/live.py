"""How the adapted LangChain tests build their histories (tests/upstream/README.md)."""

import itertools
from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage
from memoryhub_client.langchain import MemoryHubChatMessageHistory

_fresh = itertools.count(1)


def new_history(messages: Sequence[BaseMessage] = ()) -> MemoryHubChatMessageHistory:
    """A history on a memoryhub session of its own, holding `messages` (as
    InMemoryChatMessageHistory(messages=...) starts with them)."""
    history = MemoryHubChatMessageHistory(session_id=f"upstream-{next(_fresh)}")
    history.add_messages(messages)
    return history


class LiveStore(dict):
    """The tests' dict of histories by session: it equals a dict of
    InMemoryChatMessageHistory when each history holds the same messages."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, dict):
            return NotImplemented
        return _messages(self) == _messages(other)

    __hash__ = None  # type: ignore[assignment]


def _messages(store: dict) -> dict:
    return {
        key: history.messages
        for key, history in store.items()
        if isinstance(history, BaseChatMessageHistory)
    }
