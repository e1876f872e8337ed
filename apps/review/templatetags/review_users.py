"""{% user_label slug user %}: a row's user as a small label linking to their page; nothing
for the agent's own rows (user "")."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.review.links import user_url

register = template.Library()


@register.simple_tag
def user_label(slug: str, user: str) -> SafeString | str:
    if not user:
        return ""
    url = user_url(slug, user)
    if url is None:
        return format_html('<span class="user-label" title="user">{}</span>', user)
    return format_html('<a class="user-label" title="user" href="{}">{}</a>', url, user)
