"""The plain title each part of get_context's system part goes under in a prompt ("## Agent
memory", not "## MEMORY.md"): a model reads a heading as words. The part's `name` stays
what it is, the address of the entry or file it came from."""

from apps.entries import names

# The agent's documents and learnings files, by name.
_NAMED = {
    names.SOUL: "Who you are",
    names.TEAM_AGENTS: "Your team's instructions",
    names.AGENTS: "Your instructions",
    names.USER: "About your users",
    names.MEMORY: "Agent memory",
    names.LEARNINGS_ERRORS: "Lessons from past errors",
    names.LEARNINGS_CORRECTIONS: "Corrections to keep",
}
# A user's own documents (providers.user_document_name: users/<user>/<name>).
_USERS = "users/"
_OWN = {names.USER: "About {user}", names.MEMORY: "What you know about {user}"}
_KINDS = {
    "summary": "Summary of the conversation so far",
    "recap": "Recap of the messages before these",
    "fact": "A fact",
}
_HINTS = "hints/"


def part_title(kind: str, name: str) -> str:
    """The title of the part of `kind` named `name`: a plain phrase; `name` itself for a
    part this module does not know."""
    if kind in _KINDS:
        return _KINDS[kind]
    if name in _NAMED:
        return _NAMED[name]
    if kind == "hints" and name.startswith(_HINTS):
        return f"Past failures of {name.removeprefix(_HINTS)}"
    if name.startswith(_USERS):
        user, _, document = name.removeprefix(_USERS).rpartition("/")
        if user and document in _OWN:
            return _OWN[document].format(user=user)
    return name
