"""Hostile query strings on the pages: a NUL (PostgreSQL text cannot hold one) answers a
400 naming the parameter, never a server error; bytes that are not UTF-8 are replaced by
Django and the page answers as usual. Both backends."""

import pytest

from tests.factories import MessageFactory

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
