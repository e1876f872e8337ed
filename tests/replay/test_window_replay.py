"""/window's messages replay as a valid OpenAI chat at every window size: a window whose
cut falls between a call and its results reaches back to the call (and `unsummarised`
does not count what it reached back for)."""

import pytest
from memoryhub_client.chat import to_openai_messages

from apps.conversations.models import Summary
from tests.replay.conversation import (
    CALL_OF,
    CONVERSATION,
    REPLAYED,
    append,
    replay_fields,
    stored_fields,
)
from tests.support.openai_chat import validate

pytestmark = pytest.mark.django_db


def window(api, session) -> dict:
    response = api.get(f"/sessions/{session.id}/window")
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize("cap", [50, 1], ids=["working-memory", "database"])
def test_every_window_size_replays_as_a_valid_chat(api, session, cap):
    """With working memory holding the messages before the window (50), and without (1):
    the call is then read from the database."""
    ids = append(api, session)
    Summary.objects.create(session=session, content="Alice is planning a trip to Paris.")

    for size in range(1, len(CONVERSATION) + 2):
        settings = {
            "max_history_messages": size,
            "working_memory_cap": cap,
            "window_includes_unsummarised": False,
        }
        assert api.patch("/agent/settings", {"settings": settings}).status_code == 200
        body = window(api, session)

        start = max(0, len(CONVERSATION) - size)
        start = CALL_OF.get(start, start)
        assert [ids.index(m["id"]) for m in body["messages"]] == list(range(start, 15)), size
        assert [replay_fields(m) for m in body["messages"]] == [
            stored_fields(sent) for sent in CONVERSATION[start:]
        ]
        assert body["unsummarised"] == 0
        replayed = to_openai_messages(body)
        assert replayed == [
            {
                "role": "system",
                "content": "## Summary of the conversation so far\n"
                "Alice is planning a trip to Paris.",
            },
            *REPLAYED[start:],
        ]
        validate(replayed)


@pytest.mark.parametrize(
    "newest",
    [
        # The newest 2 (13, 14) and the 1 unsummarised before them (12, the call) need no more.
        pytest.param(2, id="newest-2-need-no-more"),
        # The newest (14) and the unsummarised one before it (13), reaching back to the call (12).
        pytest.param(1, id="newest-1-reaches-back-to-the-call"),
    ],
)
def test_unsummarised_counts_what_left_the_window_not_the_call_it_reached_back_for(
    api, session, newest
):
    """No summary yet: the window carries every message that left it (window_includes_
    unsummarised); from 13 on, the newest 2 open on a result and reach back to its call."""
    ids = append(api, session)
    settings = {"max_history_messages": newest, "window_unsummarised_max": 1}
    assert api.patch("/agent/settings", {"settings": settings}).status_code == 200

    body = window(api, session)

    assert [ids.index(m["id"]) for m in body["messages"]] == [12, 13, 14]
    assert body["unsummarised"] == 1
    validate(to_openai_messages(body))
