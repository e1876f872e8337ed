"""Parameter descriptions several tools share, written for the model that calls them."""

SESSION = "The session: its id, or the key you gave it."

SESSION_OPTIONAL = "The session this belongs to (its id or your key for it), if any."

USER_READS = (
    "Act for one of your end users (your own id for them, e.g. telegram:42): you see your "
    "own memory and theirs, never another user's. Left out, you see all of your memory."
)

USER_WRITES = (
    "The end user this is for (your own id for them, e.g. telegram:42): it is stored as "
    'theirs, unless `scope` is "agent".'
)

SCOPE_WRITES = (
    'Who it belongs to: "user" (the end user named by `user` or by the session; the default '
    'when there is one) or "agent" (you: then every user\'s conversations see it).'
)

USER_ENTRY = "For an entry of one of your end users: that user (your own id for them)."

SCOPE_ENTRY = (
    'Whose entry: "user" (the one of `user`; the default when `user` is given) or "agent" '
    "(your own)."
)

ENTRY_NAME = "The entry: its name or one of its aliases."

CURSOR = "Leave it out for the first page; for the next one, pass the last answer's `next_cursor`."
