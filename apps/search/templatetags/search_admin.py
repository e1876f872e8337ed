"""{% embedding_backlog %}: every embedding corpus's counts, for the admin index."""

from django import template

from apps.search.embedding import backlogs

register = template.Library()


@register.inclusion_tag("admin/search/embedding_backlog.html")
def embedding_backlog() -> dict:
    """Counts over all agents: the admin is for operators (team scoping is the review pages')."""
    return {"backlogs": backlogs()}
