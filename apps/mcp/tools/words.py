"""Parameter descriptions several tools share, written for the model that calls them."""

SESSION = "The session: its id, or the key you gave it."

SESSION_OPTIONAL = "The session this belongs to (its id or your key for it), if any."

USER_READS = (
    "Act for one of your end users (your own id for them, e.g. telegram:42): you see your "
    "own memory and theirs, never another user's. Left out (with no session and no "
    "all_users), you see your own memory alone, none of any user's."
)

ALL_USERS = (
    "true to see every end user's memory as well as your own, e.g. for a report across "
    "users. Not with `user` or a session. Left out: your own memory, and with `user` theirs."
)

USER_SESSION = (
    "The end user the session is with, if you name one: it must be the session's own user "
    "(you see your memory and theirs; a session without a user sees your own alone)."
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

# The shared words in the default tool set (docs/mcp.md, "Two tool sets"), by full text.
BRIEF = {
    USER_READS: "One of your end users (your id for them, e.g. telegram:42): you see your "
    "memory and theirs.",
    ALL_USERS: "true: every end user's memory too. Not with `user` or a session.",
    USER_SESSION: "The session's own end user, if you name one.",
    USER_WRITES: "The end user this is for (your id for them): stored as theirs.",
    SCOPE_WRITES: '"user" (the default with a user) or "agent" (yours, seen by every user).',
}
