"""The acts about one end user of an agent: erasing them (with what it does to the audit
log and, after the commit, to the bytes on disk) and removing one of their sessions."""

from apps.people.services.session_removal import RemoveOutcome, session_archives, session_remove
from apps.people.services.user_erasure import (
    Actor,
    UserErased,
    erased_user,
    erasure_vacuum,
    user_erase,
)

__all__ = [
    "Actor",
    "RemoveOutcome",
    "UserErased",
    "erased_user",
    "erasure_vacuum",
    "session_archives",
    "session_remove",
    "user_erase",
]
