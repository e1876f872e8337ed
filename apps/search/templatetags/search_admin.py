"""{% embedding_backlog %}: every embedding corpus's counts, for the admin index."""

from django import template

from apps.search.selectors import backlogs

register = template.Library()


@register.inclusion_tag("admin/search/embedding_backlog.html")
def embedding_backlog() -> dict:
    """Counts over all agents, so the admin index shows it to superusers only (staff see
    their teams' backlog through each list's embedding status filter)."""
    return {"backlogs": backlogs()}
