"""/review/: the agents of the user's teams, with their numbers and activity."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from apps.agents.selectors import agents_for_user
from apps.review.charts import activity_chart
from apps.review.selectors import ACTIVITY_DAYS, agent_stats


@login_required
@require_http_methods(["GET", "HEAD"])
def dashboard(request: HttpRequest) -> HttpResponse:
    """Every agent the user may see, each with its counts, backlog, last consolidation and
    a 30-day activity chart."""
    agents = list(agents_for_user(user=request.user).order_by("team__name", "slug"))
    cards = [
        (stats, activity_chart(stats.activity, title=f"Messages per day, {stats.agent.slug}"))
        for stats in agent_stats(agents=agents)
    ]
    return render(request, "review/dashboard.html", {"cards": cards, "days": ACTIVITY_DAYS})
