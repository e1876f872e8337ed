"""The one write path for teams, agents and API keys, and the audit log's one writer."""

from apps.agents.services.api_keys import (
    KEY_PREFIX,
    IssuedKey,
    api_key_issue,
    api_key_revoke,
    api_key_touch,
    hash_key,
)
from apps.agents.services.audit_log import audit_record, json_safe, snapshot
from apps.agents.services.teams import (
    CreatedUser,
    agent_create,
    agent_update_settings,
    membership_set,
    team_get_or_create,
    team_set_ceilings,
    user_create,
)

__all__ = [
    "KEY_PREFIX",
    "CreatedUser",
    "IssuedKey",
    "agent_create",
    "agent_update_settings",
    "api_key_issue",
    "api_key_revoke",
    "api_key_touch",
    "audit_record",
    "hash_key",
    "json_safe",
    "membership_set",
    "snapshot",
    "team_get_or_create",
    "team_set_ceilings",
    "user_create",
]
