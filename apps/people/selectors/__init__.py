"""The reads and decisions about end users: whose memory a call reads or writes, who the
agent's users are, what an erasure would delete and which were recorded, whose a failure
is, and one user's own data for a data-access request."""

from apps.people.selectors.audiences import (
    Where,
    query_audience,
    read_audience,
    session_audience,
)
from apps.people.selectors.erasure_records import user_erasure_counts, user_erasures
from apps.people.selectors.failure_owner import failure_origin
from apps.people.selectors.user_export import user_data
from apps.people.selectors.user_listing import (
    AgentUser,
    UsersPage,
    agent_user_names,
    agent_users_page,
)

__all__ = [
    "AgentUser",
    "UsersPage",
    "Where",
    "agent_user_names",
    "agent_users_page",
    "failure_origin",
    "query_audience",
    "read_audience",
    "session_audience",
    "user_data",
    "user_erasure_counts",
    "user_erasures",
]
