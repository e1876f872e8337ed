"""The default system-part providers: workspace documents, summary, learnings, error hints,
salient facts, facts relevant to the query."""

from django.utils import timezone

from apps.conversations.selectors import (
    session_recap,
    session_recent_messages,
    session_summary,
)
from apps.core.replicas import on_replica
from apps.entries import names
from apps.entries.models import Entry
from apps.entries.selectors import documents
from apps.facts.models import Fact
from apps.facts.selectors import facts_relevant, facts_salient
from apps.facts.services import fact_salience
from apps.learnings.models import LearningKind
from apps.learnings.selectors import error_hints, errors_first_seen_in, learnings_active
from apps.learnings.services import errors_touch
from apps.memory.context.legs import query_vector, recency
from apps.memory.context.types import ContextRequest, Part
from apps.people.selectors import failure_origin

# Issue 4's order for the system part; seed 001 loads these into the system prompt.
DOCUMENTS = (names.SOUL, names.AGENTS, names.USER, names.MEMORY)
# A user's own documents (issue 26), each right after the agent's of the same name.
USER_DOCUMENTS = (names.USER, names.MEMORY)


def user_document_name(user: str, name: str) -> str:
    """The part name of a user's own USER.md or MEMORY.md."""
    return f"users/{user}/{name}"


def _workspace_files(request: ContextRequest) -> dict[str, Entry]:
    """The workspace documents, read once per call: the agent's by name, the session's
    user's by user_document_name."""
    if "workspace_files" not in request.memo:
        found = documents(agent=request.agent, names=DOCUMENTS)
        user = request.session.user
        if user:
            own = documents(agent=request.agent, names=USER_DOCUMENTS, owner=user)
            found |= {user_document_name(user, name): e for name, e in own.items()}
        request.memo["workspace_files"] = found
    return request.memo["workspace_files"]


def _entry_parts(request: ContextRequest, kind: str, wanted: tuple[str, ...]) -> list[Part]:
    found = _workspace_files(request)
    user = request.session.user
    order = [
        labelled
        for name in wanted
        for labelled in (name, user_document_name(user, name) if user else None)
        if labelled and (labelled == name or name in USER_DOCUMENTS)
    ]
    return [
        # The entry services keep token_count, so documents are not re-tokenised per call.
        Part(kind=kind, name=name, content=found[name].content, tokens=found[name].token_count)
        for name in order
        if name in found and found[name].content
    ]


def _team_agents_md(request: ContextRequest) -> list[Part]:
    """Seed 001's fleet-wide AGENTS.md: the team's, shared by every agent of the team."""
    text = request.agent.team.agents_md
    return [Part(kind="document", name=names.TEAM_AGENTS, content=text)] if text.strip() else []


def workspace_documents(request: ContextRequest) -> list[Part]:
    """SOUL.md, the team's AGENTS.md (team/AGENTS.md), the agent's own AGENTS.md (which adds
    to the team's), USER.md and MEMORY.md, each when it exists and is not empty."""
    parts = _entry_parts(request, "document", DOCUMENTS)
    soul = [p for p in parts if p.name == names.SOUL]
    return soul + _team_agents_md(request) + [p for p in parts if p.name != names.SOUL]


def rolling_summary(request: ContextRequest) -> list[Part]:
    """The session's rolling summary (seed 000), when there is one."""
    summary = session_summary(session=request.session)
    if summary is None or not summary.content:
        return []
    return [Part(kind="summary", name="summary", content=summary.content)]


def consolidation_recap(request: ContextRequest) -> list[Part]:
    """Seed 004's recap (kind "recap"): the messages the last consolidation left that the
    recency leg does not carry in full, one `[time] role: content` line each, cut short."""
    recap = session_recap(session=request.session, shown=recency(request))
    return [Part(kind="recap", name="recap", content=recap.text)] if recap else []


def active_learnings(request: ContextRequest) -> list[Part]:
    """Seed 001's learnings, auto-injected each session: the active ones, as the two files
    learnings/errors.md and learnings/corrections.md (each part fits or drops whole)."""
    by_kind: dict[str, list[str]] = {}
    for learning in learnings_active(agent=request.agent, audience=request.audience):
        by_kind.setdefault(learning.kind, []).append(f"- {' '.join(learning.content.split())}")
    files: dict[str, str] = {
        LearningKind.ERROR: names.LEARNINGS_ERRORS,
        LearningKind.CORRECTION: names.LEARNINGS_CORRECTIONS,
    }
    return [
        Part(kind="learnings", name=files[kind], content="\n".join(lines))
        for kind, lines in sorted(by_kind.items(), key=lambda item: files[item[0]])
    ]


def failure_hints(request: ContextRequest) -> list[Part]:
    """Seed 000's hints for each tool that failed in the session's recent window (the
    recency leg's messages): apply a resolution, avoid a strategy. Hits refresh the TTL."""
    recent = session_recent_messages(session=request.session, limit=request.config.recency_limit)
    failed: dict[str, str] = {}
    for message in recent:
        if message.role == "tool" and message.is_error and message.tool_name:
            failed[message.tool_name] = message.content  # the latest failure of each tool
    if not failed:
        return []
    parts, touched = [], []
    # A record first seen in this session, with no hit since, is this failure itself.
    itself = errors_first_seen_in(agent=request.agent, session_id=request.session.pk)
    # Records are de-identified (issue 39): the failure is compared as they store it.
    scrub = failure_origin(agent=request.agent, user=request.session.user).scrubber
    for tool, error in failed.items():
        hints = error_hints(
            agent=request.agent,
            tool_name=tool,
            error=scrub.text(error),
            audience=request.audience,
            exclude=itself,
        )
        if hints:
            lines = [f"Tool {tool} failed before:"] + [f"- {h.text}" for h in hints]
            parts.append(Part(kind="hints", name=f"hints/{tool}", content="\n".join(lines)))
            touched += [h.record.pk for h in hints]
    errors_touch(agent=request.agent, ids=touched)
    return parts


@on_replica
def salient_facts(request: ContextRequest) -> list[Part]:
    """Facts whose salience (decayed to now) is >= salience_high_threshold, highest first."""
    config = request.config
    now = timezone.now()
    # The cached salience only ever overstates (decay lowers it), so it preselects a superset.
    candidates = facts_salient(
        agent=request.agent,
        audience=request.audience,
        threshold=config.salience_high_threshold,
        limit=config.context_fact_limit * 2,
    )
    scored = [(fact_salience(f, config=config, now=now), f) for f in candidates]
    scored = [(s, f) for s, f in scored if s >= config.salience_high_threshold]
    scored.sort(key=lambda pair: (-pair[0], pair[1].pk))
    parts = []
    for score, fact in scored[: config.context_fact_limit]:
        fact.salience = score
        parts.append(_fact_part(fact))
    return parts


@on_replica
def relevant_facts(request: ContextRequest) -> list[Part]:
    """With a query, the facts relevant to it (facts_relevant), best first; get_context
    drops the ones an earlier provider gave (the salient facts)."""
    config = request.config
    if not request.query or not request.query.strip() or config.context_relevant_fact_limit <= 0:
        return []
    vector, _ = query_vector(request)  # without one, keyword matches still count
    found = facts_relevant(
        agent=request.agent,
        audience=request.audience,
        query=request.query,
        vector=vector,
        min_similarity=config.context_fact_relevance_threshold,
        k=config.context_relevant_fact_limit,
    )
    return [_fact_part(fact) for fact, _ in found]


def _fact_part(fact: Fact) -> Part:
    line = f"[{fact.category.name}] {fact.key}: {fact.value}"
    return Part(kind="fact", name=f"fact:{fact.pk}", content=line, fact=fact)
