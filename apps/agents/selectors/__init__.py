"""Reads for agents, keys, team access and the audit log."""

from apps.agents.selectors.api_key_reads import api_key_get, api_key_lookup, api_keys
from apps.agents.selectors.audit_reads import audit_events
from apps.agents.selectors.team_access import agent_for_user, agents_for_user, user_role

__all__ = [
    "agent_for_user",
    "agents_for_user",
    "api_key_get",
    "api_key_lookup",
    "api_keys",
    "audit_events",
    "user_role",
]
