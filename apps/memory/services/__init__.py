"""The agent-facing composition: seed 001's memory tools, appends with their lifecycle
triggers, get_context with seed 001's context manager, and the workspace archive."""

from apps.memory.services.context_manager import ContextTurn, context_turn
from apps.memory.services.memory_tools import MemorySaveResult, memory_recall, memory_save
from apps.memory.services.message_appends import Appended, messages_append_turn
from apps.memory.services.workspace_transfer import (
    WorkspaceLoaded,
    workspace_archive,
    workspace_load,
)

__all__ = [
    "Appended",
    "ContextTurn",
    "MemorySaveResult",
    "WorkspaceLoaded",
    "context_turn",
    "memory_recall",
    "memory_save",
    "messages_append_turn",
    "workspace_archive",
    "workspace_load",
]
