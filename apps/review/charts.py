"""Inline SVG charts rendered on the server: readable without JavaScript, each bar carries
its count in a <title> (a tooltip, and read out by screen readers)."""

from collections.abc import Sequence

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from apps.review.selectors import DayCount

WIDTH = 300
HEIGHT = 60
GAP = 2


def activity_chart(days: Sequence[DayCount], *, title: str) -> SafeString:
    """Messages per day as bars, oldest day on the left; `title` labels the chart."""
    total = sum(d.count for d in days)
    peak = max((d.count for d in days), default=0)
    step = WIDTH / max(len(days), 1)
    bars = []
    for i, d in enumerate(days):
        # An empty day still gets a hairline so the 30-day span stays visible.
        h = max(round(d.count / peak * (HEIGHT - 2), 1), 1.0) if peak and d.count else 1.0
        noun = "message" if d.count == 1 else "messages"
        bars.append(
            (
                "bar" if d.count else "bar empty",
                round(i * step + GAP / 2, 1),
                round(HEIGHT - h, 1),
                round(step - GAP, 1),
                h,
                f"{d.day.isoformat()}: {d.count} {noun}",
            )
        )
    rects = format_html_join(
        "",
        '<rect class="{}" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>',
        bars,
    )
    label = f"{title}: {total} messages in {len(days)} days, at most {peak} a day"
    return format_html(
        '<svg class="activity" viewBox="0 0 {} {}" width="{}" height="{}" role="img" '
        'aria-label="{}"><title>{}</title>{}</svg>',
        WIDTH,
        HEIGHT,
        WIDTH,
        HEIGHT,
        label,
        label,
        rects,
    )
