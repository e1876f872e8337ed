from datetime import datetime
from typing import Any

from ninja import Schema


class AgentOut(Schema):
    slug: str
    name: str
    team: str
    created_at: datetime
    settings: dict[str, Any]
    overrides: dict[str, Any]


class SettingsPatch(Schema):
    """Partial update of the agent's settings; a null value restores the default."""

    settings: dict[str, Any]
