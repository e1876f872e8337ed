"""Dates in the memory leg (issue 24, part 5): relative dates resolved against the day a
message was written (apps/memory/context/dates.py), and the per-agent setting that puts
them in get_context's memory windows."""

from datetime import UTC, date, datetime

import pytest

from apps.memory.context.dates import resolve_relative
from apps.providers.token_counts import count_tokens

MONDAY = date(2023, 5, 8)


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        (
            "I went to a support group yesterday.",
            "I went to a support group yesterday (7 May 2023).",
        ),
        ("Last night was fun", "Last night (7 May 2023) was fun"),
        ("the day before yesterday", "the day before yesterday (6 May 2023)"),
        ("see you tomorrow", "see you tomorrow (9 May 2023)"),
        ("Last week I gave a talk", "Last week (the week of 1 May 2023) I gave a talk"),
        ("next week", "next week (the week of 15 May 2023)"),
        ("last weekend", "last weekend (the weekend of 6 May 2023)"),
        ("this weekend", "this weekend (the weekend of 13 May 2023)"),
        ("last Sunday", "last Sunday (7 May 2023)"),
        ("last monday", "last monday (1 May 2023)"),
        ("next Friday", "next Friday (12 May 2023)"),
        ("last month", "last month (April 2023)"),
        ("next month", "next month (June 2023)"),
        ("last year", "last year (2022)"),
        ("3 days ago", "3 days ago (5 May 2023)"),
        ("a couple of days ago", "a couple of days ago (6 May 2023)"),
        ("two weeks ago", "two weeks ago (the week of 24 April 2023)"),
        ("a month ago", "a month ago (April 2023)"),
        ("ten years ago", "ten years ago (2013)"),
        ("nothing relative here, only Monday", "nothing relative here, only Monday"),
    ],
)
def test_relative_dates_are_resolved_against_the_day_written(text, resolved):
    assert resolve_relative(text, MONDAY) == (resolved, int(text != resolved))


def test_every_expression_is_resolved_once():
    text = "Yesterday I ran, last week I swam, and the day before yesterday I rested."

    assert resolve_relative(text, MONDAY) == (
        "Yesterday (7 May 2023) I ran, last week (the week of 1 May 2023) I swam, and the day "
        "before yesterday (6 May 2023) I rested.",
        3,
    )


@pytest.mark.django_db
def test_the_setting_resolves_them_in_the_memory_windows(
    api, agent, django_capture_on_commit_callbacks
):
    api.post("/sessions", {"key": "trip"})
    api.post("/sessions", {"key": "now"})
    written = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).isoformat()
    body = {"messages": [{"role": "user", "content": "I went to the support group yesterday",
                          "created_at": written}]}  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/sessions/trip/messages", body).status_code == 201
    query = {"session_id": "now", "query": "when did I go to the support group", "lifecycle": "off"}
    assert agent.config.context_memory_resolve_dates is True

    [message] = api.post("/context", query).json()["memory"][0]["messages"]
    api.patch("/agent/settings", {"settings": {"context_memory_resolve_dates": False}})
    [plain] = api.post("/context", query).json()["memory"][0]["messages"]

    resolved = "I went to the support group yesterday (7 May 2023)"
    assert (message["content"], message["tokens"]) == (resolved, count_tokens(resolved))
    said = "I went to the support group yesterday"
    assert (plain["content"], plain["tokens"]) == (said, count_tokens(said))
