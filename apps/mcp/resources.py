"""Resources: the workspace documents as `memory://<name>` (MEMORY.md, SOUL.md, AGENTS.md,
USER.md, HEARTBEAT.md, the daily logs memory/YYYY-MM-DD.md), seed 004's history as
`memory://HISTORY.md` and `memory://HISTORY/{YYYY-MM}`. Read through the same selectors as
GET /entries/{name} and GET /memory/history/files/{name}."""

import re

import mcp_types as types

from apps.agents.models import Agent
from apps.agents.users import AGENT, AGENT_ONLY
from apps.core.errors import NotFound
from apps.entries import names
from apps.entries.selectors import entries_all, entry_get
from apps.lifecycle.selectors import history_document, history_page

SCHEME = "memory://"
MARKDOWN = "text/markdown"
HISTORY_ALL = "HISTORY.md"
_HISTORY_MONTH = re.compile(r"^HISTORY/(?P<month>[^/]+)$")

TEMPLATES = [
    types.ResourceTemplate(
        name="history-month",
        uri_template=SCHEME + "HISTORY/{month}",
        description="Your history log of one month (YYYY-MM): the dated summaries of your "
        "conversations.",
        mime_type=MARKDOWN,
    ),
    types.ResourceTemplate(
        name="daily-log",
        uri_template=SCHEME + "memory/{day}.md",
        description="Your log of one day (YYYY-MM-DD): the facts you saved that day.",
        mime_type=MARKDOWN,
    ),
]


def _is_workspace_document(name: str) -> bool:
    # The learnings files are rendered by apps.learnings, not stored as entries.
    return names.is_document(name) and name not in names.LEARNINGS


def resource_list(agent: Agent) -> list[types.Resource]:
    """The agent's own workspace documents that exist (no user's: issue 26), then
    HISTORY.md when there is history."""
    found = [
        types.Resource(
            name=e.name, uri=SCHEME + e.name, mime_type=MARKDOWN, size=len(e.content.encode())
        )
        for e in entries_all(agent=agent, owner=AGENT)
        if _is_workspace_document(e.name)
    ]
    if history_page(agent=agent, limit=1, audience=AGENT_ONLY).items:
        found.append(types.Resource(name=HISTORY_ALL, uri=SCHEME + HISTORY_ALL, mime_type=MARKDOWN))
    return found


def resource_read(agent: Agent, uri: str) -> str:
    """The text behind `uri`; NotFound for anything that is not one of the agent's resources."""
    name = uri.removeprefix(SCHEME) if uri.startswith(SCHEME) else None
    if name == HISTORY_ALL:
        return history_document(agent=agent, name=names.HISTORY, audience=AGENT_ONLY)
    if name and (match := _HISTORY_MONTH.match(name)):
        month = names.history_month_name(match["month"])
        return history_document(agent=agent, name=month, audience=AGENT_ONLY)
    if name and _is_workspace_document(name):
        return entry_get(agent=agent, ref=name, audience=AGENT_ONLY).content
    raise NotFound(f"no resource '{uri}'", loc=["uri"])
