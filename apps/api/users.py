"""/users: the agent's end users (issue 26), and erasing one of them with everything of
theirs."""

from ninja import Query

from apps.api.registry import PathRest, Router, access
from apps.api.request import AuthedRequest
from apps.people import schemas, selectors
from apps.people.selectors import UsersPage
from apps.people.services import Actor, erased_user, erasure_vacuum, user_erase

router = Router(tags=["users"])

# The agent's own key asks; the audit event names it so (no person is logged in).
API_ACTOR = Actor(source="api", name="agent")


@router.get("/users", response=schemas.AgentUserPage)
@access(agent_level=True)
def list_users(request: AuthedRequest, query: Query[schemas.UserQuery]) -> UsersPage:
    """The agent's end users in name order, each with the number of their sessions: every
    user a session or a row of memory names."""
    return selectors.agent_users_page(agent=request.auth, **query.dict())


@router.delete("/users/{user}", response=schemas.UserEraseOut)
def erase_user(
    request: AuthedRequest, user: PathRest, query: Query[schemas.UserEraseQuery]
) -> dict:
    """Erase one end user: every session, message, vector, fact (with its versions), entry,
    learning, HISTORY entry and run of theirs, in one transaction, with the counts deleted
    (zeros once nothing is left); the agent's rows from their sessions lose the link, audit
    events about their rows their content. The agent's own memory and other users' stay.
    `vacuum=true` then makes the deleted bytes unreadable on disk (docs/memory.md).
    URL-encode the user ("telegram%3A42"); a blank one is 422."""
    name = erased_user(user)
    erased = user_erase(agent=request.auth, user=name, actor=API_ACTOR)
    vacuumed = erasure_vacuum() if query.vacuum else False
    return {"user": name, "deleted": erased.counts(), "vacuumed": vacuumed}
