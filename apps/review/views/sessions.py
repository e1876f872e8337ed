"""The agent's sessions, and one session's timeline."""

import uuid

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render

from apps.agents.users import EVERYONE
from apps.conversations.models import Session
from apps.conversations.selectors import (
    session_get,
    session_markers,
    session_meta,
    session_summary,
    window_messages,
)
from apps.core.errors import InvalidInput
from apps.lifecycle.selectors import runs_page
from apps.review.access import Access, agent_list, agent_page
from apps.review.links import user_url
from apps.review.selectors import (
    TimelinePage,
    message_counts,
    session_archives,
    sessions_by_activity,
    timeline_around,
    timeline_items,
    timeline_page,
)
from apps.review.views.common import or_404, user_filter

SESSIONS_PER_PAGE = 50
RUNS_SHOWN = 20


@agent_list
def session_list(request: HttpRequest, access: Access) -> HttpResponse:
    """The agent's sessions by last activity, `?q=` matching key or title, `?user=` of one
    owner (views.common.user_param), 50 a page."""
    q = request.GET.get("q", "").strip()
    uf = user_filter(request, access)
    sessions_qs = sessions_by_activity(agent=access.agent, q=q, user=uf.value)
    paginator = Paginator(sessions_qs, SESSIONS_PER_PAGE)
    page = paginator.get_page(request.GET.get("page"))
    sessions = list(page.object_list)
    counts = message_counts(sessions=sessions)
    context = {
        "access": access,
        "tab": "sessions",
        "q": q,
        "uf": uf,
        "page": page,
        "rows": [(s, counts.get(s.pk, 0)) for s in sessions],
    }
    return render(request, "review/sessions.html", context)


def _session(access: Access, session_id: uuid.UUID) -> Session:
    # session_get sets session.agent (window_messages reads its settings) without a query.
    return or_404(session_get, agent=access.agent, ref=str(session_id))


def _page(request: HttpRequest, session: Session) -> TimelinePage:
    """The page the query asks for: ?around=<message id>, ?before= / ?after=<cursor>, or the
    newest. Raises InvalidInput for a bad cursor, Http404 for a message not in the session."""
    around = request.GET.get("around")
    if around:
        try:
            message_id = uuid.UUID(around)
        except ValueError as exc:
            raise Http404("no such message") from exc
        page = timeline_around(session=session, message_id=message_id)
        if page is None:
            raise Http404("no such message in this session")
        return page
    before_cursor, after_cursor = request.GET.get("before"), request.GET.get("after")
    if before_cursor and after_cursor:
        raise InvalidInput("give either before or after, not both", loc=["query", "before"])
    return timeline_page(session=session, before_cursor=before_cursor, after_cursor=after_cursor)


@agent_page
def session_timeline(request: HttpRequest, access: Access, session_id: uuid.UUID) -> HttpResponse:
    """A window of the session's messages (newest 100 by default) with the rolling summary,
    compact markers and resets linking to their archives, the hot-window boundary and the
    session's runs."""
    session = _session(access, session_id)
    try:
        page = _page(request, session)
    except InvalidInput as exc:
        return HttpResponseBadRequest(exc.message)
    meta = session_meta(session=session)
    # The hot window as the agent is sent it (session_window): the newest messages, those not
    # summarised yet, and back to the call of any tool result it opens on, so its line is
    # never drawn between a call and its result.
    hot = window_messages(session=session, limit=access.agent.config.max_history_messages)
    markers = session_markers(session=session)
    archives = session_archives(session=session, markers=markers)
    items = timeline_items(
        page=page,
        markers=markers,
        archives=archives,
        hot_first_id=hot[0].pk if hot else None,
    )
    newest = max(markers, key=lambda m: (m.cutoff_at, m.pk), default=None)
    context = {
        "access": access,
        "tab": "sessions",
        "session": session,
        "user_url": user_url(access.agent.slug, session.user),
        "page": page,
        "items": items,
        # The resets open the session's first page; another page names them in its header.
        "resets_elsewhere": archives.resets if page.previous_at is not None else [],
        "no_messages": not page.messages,
        "summary": session_summary(session=session),
        "start_at": meta.start_at if meta else None,
        "window_size": len(hot),
        # What the summary card says of a compaction: the archive of the newest one.
        "last_archive": archives.by_marker.get(newest.pk) if newest else None,
        "runs": runs_page(
            agent=access.agent, session=session, limit=RUNS_SHOWN, audience=EVERYONE
        ).items,
    }
    return render(request, "review/timeline.html", context)
