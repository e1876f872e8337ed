"""{{ text|markdown }}: an entry's markdown as sanitised HTML (apps/review/markdown.py)."""

from django import template
from django.utils.safestring import SafeString

from apps.review.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown", is_safe=True)
def markdown(text: str | None) -> SafeString:
    return render_markdown(text or "")
