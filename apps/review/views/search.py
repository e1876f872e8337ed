"""Search an agent's messages in the browser: the API's selector (message_search) with its
modes, a session filter and a user filter (the sessions of one owner). Hits are shown in
blocks, one per passage of a session: the hits' context windows (the agent's
search_context_before/after) merged where they overlap or touch, each message once; each
hit marked, with its score and legs as a person reads them and a link to its place in the
timeline."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.agents.users import EVERYONE
from apps.conversations.selectors import message_search, session_get
from apps.core.errors import ApplicationError
from apps.review import curation
from apps.review.access import Access, agent_list
from apps.review.forms import SearchForm
from apps.review.views.common import user_filter

HITS = 20


@agent_list
def search(request: HttpRequest, access: Access) -> HttpResponse:
    form = SearchForm(request.GET or None, initial={"mode": "hybrid"})
    uf = user_filter(request, access)
    context = {
        "access": access,
        "tab": "search",
        "form": form,
        "uf": uf,
        "sessions": curation.search_sessions(agent=access.agent, user=uf.value),
        "hits": None,
        "blocks": [],
        "legend": curation.legend(),
        "error": "",
    }
    if not form.is_bound:
        return render(request, "review/search.html", context)
    if not form.is_valid():
        context["error"] = "; ".join(str(e) for errors in form.errors.values() for e in errors)
        return render(request, "review/search.html", context, status=400)
    q, ref = form.cleaned_data["q"], form.cleaned_data["session"]
    mode = form.cleaned_data["mode"] or "hybrid"
    context.update(query=q, mode=mode, session_ref=ref)
    if not q.strip():
        return render(request, "review/search.html", context)
    try:
        session = session_get(agent=access.agent, ref=ref) if ref else None
        result = message_search(
            agent=access.agent,
            query=q,
            mode=mode,
            k=HITS,
            session=session,
            session_user=uf.value,
            audience=EVERYONE,  # the page's own filter: every user unless it names one
        )
    except ApplicationError as exc:  # unknown session, a query over the size limit
        context["error"] = exc.message
        return render(request, "review/search.html", context, status=400)
    if result.degraded:
        context["error"] = "The query could not be embedded: these are keyword (BM25) matches."
    page = curation.search_page(access.agent, result)
    context.update(hits=page.hits, blocks=page.blocks)
    return render(request, "review/search.html", context)
