"""/team: the calling agent's team's fleet-wide AGENTS.md."""

from apps.agents.models import TEAM_AGENTS_MD_NAME
from apps.agents.schemas import TeamDocumentOut
from apps.api.registry import Router
from apps.api.request import AuthedRequest

router = Router(tags=["agent"])


# The summary as first published (ninja derives it from the name the endpoint had).
@router.get("/team/AGENTS.md", response=TeamDocumentOut, summary="Get Team Agents Md")
def get_agents_md(request: AuthedRequest) -> TeamDocumentOut:
    """The fleet-wide AGENTS.md of the agent's team ("" when the team has none):
    read-only here, edited by people in the admin."""
    team = request.auth.team
    return TeamDocumentOut(team=team.name, name=TEAM_AGENTS_MD_NAME, content=team.agents_md)
