"""{% user_label slug user %}: a row's user as a small label linking to their page; for the
agent's own rows (user "") a muted "agent-wide", so a User cell is never blank."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.review.links import user_url

register = template.Library()

AGENT_WIDE = format_html(
    '<span class="agent-wide" title="{}">agent-wide</span>',
    "the agent's own: no one user's, read for every user",
)


@register.simple_tag
def user_label(slug: str, user: str) -> SafeString:
    if not user:
        return AGENT_WIDE
    url = user_url(slug, user)
    if url is None:
        return format_html('<span class="user-label" title="user">{}</span>', user)
    return format_html('<a class="user-label" title="user" href="{}">{}</a>', url, user)
