from datetime import datetime
from typing import Any

from ninja import Schema
from pydantic import Field


class AgentOut(Schema):
    slug: str
    name: str
    team: str
    created_at: datetime
    settings: dict[str, Any]
    overrides: dict[str, Any]
    ceilings: dict[str, int | float] = Field(
        description="The team's ceiling of each limit that protects the service: a setting "
        "may be lowered, never raised past it."
    )


class SettingsPatch(Schema):
    """Partial update of the agent's settings; a null value restores the default."""

    settings: dict[str, Any]


class TeamDocumentOut(Schema):
    team: str
    name: str = Field(description="The document's name in the agent's system prompt.")
    content: str
