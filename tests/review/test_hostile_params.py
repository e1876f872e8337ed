"""Hostile query strings on the pages: a NUL (PostgreSQL text cannot hold one) answers a
400 naming the parameter, never a server error; bytes that are not UTF-8 are replaced by
Django and the page answers as usual. Both backends."""

from urllib.parse import quote

import pytest

from tests.factories import MessageFactory
from tests.review.users_seed import seed_three

NUL_PAGES = [
    ("sessions/", "q=a%00b&page=1", "q"),
    ("search/", "q=a%00b&mode=hybrid", "q"),
    ("search/", "q=cat&mode=keyword%00", "mode"),
    ("learnings/", "q=a&status=%00", "status"),
    ("runs/", "kind=&cursor=%00", "cursor"),
    ("facts/", "q=%00", "q"),
    ("entries/", "q=x%00", "q"),
    ("audit/", "cursor=%00", "cursor"),
    ("queue/", "q=%00", "q"),
    ("sessions/", "user=a%00b", "user"),
    ("facts/", "user=%00", "user"),
    ("entries/", "user=%00", "user"),
    ("history/2026-03/", "user=%00", "user"),
    ("learnings/", "user=%00", "user"),
    ("runs/", "user=%00", "user"),
    ("search/", "q=cat&user=%00", "user"),
    ("users/", "page=%00", "page"),
]


@pytest.mark.parametrize(("page", "query", "name"), NUL_PAGES)
def test_a_nul_in_a_query_parameter_is_a_400_naming_it(
    viewer_client, agent, session, page, query, name
):
    MessageFactory(session=session, content="the cat sat")

    response = viewer_client.get(f"/review/agents/{agent.slug}/{page}?{query}")

    assert response.status_code == 400
    assert response.content.decode() == f"Bad request: {name} must not contain NUL characters"


def test_a_nul_in_a_timeline_anchor_or_the_admin_search_is_a_400(
    viewer_client, admin_client, agent, session
):
    timeline = f"/review/agents/{agent.slug}/sessions/{session.id}/"

    assert viewer_client.get(f"{timeline}?around=%00").status_code == 400
    assert viewer_client.get(f"{timeline}?after=a%00").status_code == 400
    assert admin_client.get("/admin/facts/fact/?q=%00").status_code == 400


def test_bytes_that_are_not_utf8_are_replaced_and_the_page_answers(viewer_client, agent, session):
    MessageFactory(session=session, content="the cat sat")

    # %ED%A0%80 would be a lone surrogate; Django decodes query strings with replacement.
    response = viewer_client.get(f"/review/agents/{agent.slug}/search/?q=cat%ED%A0%80&mode=keyword")

    assert response.status_code == 200


# The pages a `user` filter narrows (issue 26), and values no user holds.
USER_PAGES = ["sessions/", "facts/", "entries/", "history/2026-03/", "learnings/", "runs/",
              "search/?q=parcel&mode=contains&"]  # fmt: skip
HOSTILE_USERS = [
    "x" * 5000,  # past USER_MAX
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "../../etc/passwd",
    "%ED%A0%80",  # sent raw below: bytes that are not UTF-8
    "\u202emoc.live",  # right-to-left override
    "\ttab",  # a control character no user holds
]


@pytest.mark.parametrize("page", USER_PAGES)
@pytest.mark.parametrize("user", HOSTILE_USERS)
def test_a_hostile_user_filter_answers_an_empty_page_with_the_value_escaped(
    viewer_client, agent, page, user
):
    seed_three(agent)
    value = user if user.startswith("%") else quote(user, safe="")
    sep = "" if page.endswith("&") else "?"

    response = viewer_client.get(f"/review/agents/{agent.slug}/{page}{sep}user={value}")

    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "user-label" not in html  # no row of anyone matches
    if user.startswith("<"):
        assert '<option value="&lt;script&gt;alert(1)&lt;/script&gt;" selected>' in html
