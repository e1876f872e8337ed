"""What an API key may do (issue 39): act for one end user only, and/or only read."""

from dataclasses import dataclass


@dataclass(frozen=True)
class KeyScope:
    """A key's scope: `user` set confines every call to that end user (None: any user of
    the agent); `read_only` refuses every write. UNSCOPED is the agent's full key."""

    user: str | None = None
    read_only: bool = False

    @property
    def unscoped(self) -> bool:
        return self.user is None and not self.read_only

    def describe(self) -> str:
        """E.g. "user alice, read-only" or "every user, read-write"."""
        who = f"user {self.user}" if self.user is not None else "every user"
        return f"{who}, {'read-only' if self.read_only else 'read-write'}"


UNSCOPED = KeyScope()
