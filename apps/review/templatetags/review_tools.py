"""Tool names as a person reads them: `{{ name|tool_name }}` breaks a long name only after
its underscores (never mid-word, "book_ti|cket"); `{{ message|tool_calls_named }}` names
the tools an assistant message calls."""

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from apps.conversations.models import Message

register = template.Library()

_BREAK_AFTER_UNDERSCORE = mark_safe("_<wbr>")  # a place to wrap, and the only one


@register.filter
def tool_name(name: str) -> SafeString:
    """`name` as <code class="tool-name">, escaped; the stylesheet keeps its words whole."""
    parts = ((part,) for part in str(name).split("_"))
    inner = format_html_join(_BREAK_AFTER_UNDERSCORE, "{}", parts)
    return format_html('<code class="tool-name">{}</code>', inner)


@register.filter
def tool_calls_named(message: Message) -> list[str]:
    """The names of the tools an assistant message calls, in order (its call's id when a
    call names no function)."""
    calls = message.tool_calls_json if isinstance(message.tool_calls_json, list) else []
    names = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        names.append(str(name or call.get("name") or call.get("id") or "?"))
    return names
