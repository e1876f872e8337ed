from typing import TYPE_CHECKING

from django.apps import AppConfig
from django.db.models import Model

if TYPE_CHECKING:
    from apps.search.corpora import Rendered


def embedding_text(message: Model) -> str:
    """The text embedded for a message: the participant name with the content, so questions
    naming a person ("what did Caroline say") match that person's first-person messages."""
    from apps.conversations.models import Message

    assert isinstance(message, Message)  # the messages corpus reads Message rows
    return f"{message.name}: {message.content}" if message.name else message.content


def render(message: Model) -> "Rendered":
    from apps.conversations.models import Message
    from apps.search.corpora import Rendered

    assert isinstance(message, Message)

    speaker = f"{message.role} {message.name}".strip()
    return Rendered(kind="message", title=speaker, text=message.content)


class ConversationsConfig(AppConfig):
    name = "apps.conversations"
    label = "conversations"

    def ready(self) -> None:
        from apps.conversations.models import Message, MessageTokens
        from apps.search.corpora import Corpus, TokenStore, register

        register(
            Corpus(
                name="messages",
                model=Message,
                # The participant name is indexed with the content (search.0001 migration).
                text_fields=("name", "content"),
                embed=embedding_text,
                embed_fields=("name", "content"),
                session_field="session",
                kind_field="role",
                order_fields=("created_at", "id"),
                render=render,
                tokens=TokenStore(model=MessageTokens, owner_field="message"),
            )
        )
