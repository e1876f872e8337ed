"""The default system-part providers: workspace documents, summary, learnings, salient facts."""

from django.utils import timezone

from apps.conversations.selectors import session_summary
from apps.entries import names
from apps.entries.models import Entry
from apps.entries.selectors import documents
from apps.facts.selectors import facts_salient
from apps.facts.services import fact_salience
from apps.memory.context.types import ContextRequest, Part

# Issue 4's order for the system part; seed 001 loads these into the system prompt.
DOCUMENTS = (names.SOUL, names.AGENTS, names.USER, names.MEMORY)


def _workspace_files(request: ContextRequest) -> dict[str, Entry]:
    """The documents and learnings files, read once per call for both providers."""
    if "workspace_files" not in request.memo:
        request.memo["workspace_files"] = documents(
            agent=request.agent, names=(*DOCUMENTS, *names.LEARNINGS)
        )
    return request.memo["workspace_files"]


def _entry_parts(request: ContextRequest, kind: str, wanted: tuple[str, ...]) -> list[Part]:
    found = _workspace_files(request)
    return [
        # The entry services keep token_count, so documents are not re-tokenised per call.
        Part(kind=kind, name=name, content=found[name].content, tokens=found[name].token_count)
        for name in wanted
        if name in found and found[name].content
    ]


def workspace_documents(request: ContextRequest) -> list[Part]:
    """SOUL.md, AGENTS.md, USER.md and MEMORY.md when they exist and are not empty."""
    return _entry_parts(request, "document", DOCUMENTS)


def rolling_summary(request: ContextRequest) -> list[Part]:
    """The session's rolling summary (seed 000), when there is one."""
    summary = session_summary(session=request.session)
    if summary is None or not summary.content:
        return []
    return [Part(kind="summary", name="summary", content=summary.content)]


def learnings_files(request: ContextRequest) -> list[Part]:
    """Seed 001's learnings/errors.md and learnings/corrections.md workspace files."""
    return _entry_parts(request, "learnings", names.LEARNINGS)


def salient_facts(request: ContextRequest) -> list[Part]:
    """Facts whose salience (decayed to now) is >= salience_high_threshold, highest first."""
    config = request.config
    now = timezone.now()
    # The cached salience only ever overstates (decay lowers it), so it preselects a superset.
    candidates = facts_salient(
        agent=request.agent,
        threshold=config.salience_high_threshold,
        limit=config.context_fact_limit * 2,
    )
    scored = [(fact_salience(f, config=config, now=now), f) for f in candidates]
    scored = [(s, f) for s, f in scored if s >= config.salience_high_threshold]
    scored.sort(key=lambda pair: (-pair[0], pair[1].pk))
    parts = []
    for score, fact in scored[: config.context_fact_limit]:
        fact.salience = score
        line = f"[{fact.category.name}] {fact.key}: {fact.value}"
        parts.append(Part(kind="fact", name=f"fact:{fact.pk}", content=line, fact=fact))
    return parts
