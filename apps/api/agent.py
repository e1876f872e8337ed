"""/agent: the calling agent's own profile and settings."""

from apps.agents import services
from apps.agents.config import effective_ceilings
from apps.agents.models import Agent
from apps.agents.schemas import AgentOut, SettingsPatch
from apps.api.registry import Router, access
from apps.api.request import AuthedRequest

router = Router(tags=["agent"])


def _out(agent: Agent) -> AgentOut:
    return AgentOut(
        slug=agent.slug,
        name=agent.name,
        team=agent.team.name,
        created_at=agent.created_at,
        settings=agent.config.as_dict(),
        overrides=agent.settings,
        ceilings=effective_ceilings(agent.team.ceilings),
    )


@router.get("/agent", response=AgentOut)
def get_agent(request: AuthedRequest) -> AgentOut:
    """The agent this key belongs to, with its effective settings (overrides clamped to the
    team's ceilings) and the ceilings themselves."""
    return _out(request.auth)


@router.patch("/agent/settings", response=AgentOut)
@access(agent_level=True)
def update_settings(request: AuthedRequest, payload: SettingsPatch) -> AgentOut:
    """Override settings for this agent; unknown names, out-of-range values and values over
    the team's ceiling get 422 naming the setting."""
    agent = services.agent_update_settings(agent=request.auth, changes=payload.settings)
    return _out(agent)
