"""The agent's users (issue 26): the index of every user of its sessions and memory with
their counts, and one user's page with their sessions and memory, none of anyone else's."""

from urllib.parse import quote

import pytest
from django.urls import NoReverseMatch, reverse

from apps.agents.users import AGENT
from apps.learnings.services import learning_create
from tests.factories import SessionFactory
from tests.review.users_seed import ALICE, BOB, owned_by, seed_owner, seed_three

pytestmark = pytest.mark.django_db

USERS = "/review/agents/alice-bot/users/"
ALICE_PAGE = USERS + "telegram:42/"


@pytest.fixture
def owners(agent):
    return seed_three(agent)


def _erase_route_exists() -> bool:
    """Whether the erasure's confirmation page is installed (another branch builds it)."""
    try:
        reverse("review:user_erase", args=["alice-bot", ALICE])
    except NoReverseMatch:
        return False
    return True


# --- who may see them ---


@pytest.mark.parametrize("path", [USERS, ALICE_PAGE])
def test_anonymous_is_sent_to_login(anon_client, owners, path):
    response = anon_client.get(path)

    login = f"/accounts/login/?next={quote(path, safe='/')}"
    assert (response.status_code, response["Location"]) == (302, login)


@pytest.mark.parametrize("path", [USERS, ALICE_PAGE])
def test_another_team_gets_404(outsider_client, owners, path):
    assert outsider_client.get(path).status_code == 404


def test_a_user_of_another_teams_agent_has_no_page_here_nor_there(
    viewer_client, outsider_client, other_agent, owners
):
    seed_owner(other_agent, "mallory:7", "mallory")

    assert viewer_client.get(USERS + "mallory:7/").status_code == 404
    assert viewer_client.get("/review/agents/mallory-bot/users/mallory:7/").status_code == 404
    assert viewer_client.get("/review/agents/mallory-bot/users/").status_code == 404
    # Its own team sees it; and not alice-bot's users on its agent.
    assert outsider_client.get("/review/agents/mallory-bot/users/mallory:7/").status_code == 200
    assert outsider_client.get(f"/review/agents/mallory-bot/users/{ALICE}/").status_code == 404
    assert [u.row.user for u in viewer_client.get(USERS).context["users"]] == [BOB, ALICE]


# --- the index ---


def test_the_index_lists_every_user_of_sessions_and_memory_with_counts(
    viewer_client, agent, owners
):
    owned_by(learning_create(agent=agent, kind="correction", content="carol: no emoji"), "carol")
    SessionFactory(agent=agent, key="eve-chat", user="team/eve")

    response = viewer_client.get(USERS)

    assert response.status_code == 200
    shown = [(u.row.user, u.row.sessions, u.row.facts, u.url) for u in response.context["users"]]
    assert shown == [
        (BOB, 1, 2, USERS + "bob@example.com/"),
        ("carol", 0, 0, USERS + "carol/"),
        ("team/eve", 1, 0, None),  # a "/" cannot be one path segment: no page
        (ALICE, 1, 2, ALICE_PAGE),
    ]
    html = response.content.decode()
    assert f'<a class="user-label" href="{ALICE_PAGE}">telegram:42</a>' in html
    assert '<span class="user-label">team/eve</span>' in html
    assert 'href="/review/agents/alice-bot/sessions/?user=team%2Feve"' in html


def test_the_index_is_empty_without_users_and_linked_from_the_agent_page(viewer_client, agent):
    SessionFactory(agent=agent, key="agent-only")

    response = viewer_client.get(USERS)

    assert response.context["users"] == []
    assert "No users yet" in response.content.decode()
    assert f'href="{USERS}"' in viewer_client.get("/review/agents/alice-bot/").content.decode()


def test_the_index_is_paged_by_a_hundred(viewer_client, agent):
    for i in range(102):
        SessionFactory(agent=agent, key=f"s{i}", user=f"u{i:03d}")

    first = viewer_client.get(USERS).context["users"]
    second = viewer_client.get(USERS, {"page": 2}).context["users"]

    assert [u.row.user for u in first] == [f"u{i:03d}" for i in range(100)]
    assert [u.row.user for u in second] == ["u100", "u101"]


# --- one user's page ---


def test_the_user_page_lists_exactly_their_sessions_and_memory(viewer_client, owners):
    alice = owners[ALICE]

    response = viewer_client.get(ALICE_PAGE)

    assert response.status_code == 200
    memory = response.context["memory"]
    assert [s.key for s in memory.sessions] == ["alice-chat"]
    assert [(s.key, n) for s, n in response.context["session_rows"]] == [("alice-chat", 2)]
    assert sorted(f.pk for f in memory.facts) == sorted(f.pk for f in alice.facts)
    assert [e.pk for e in memory.entries.documents] == [e.pk for e in alice.documents]
    assert [e.pk for e in memory.entries.notes] == [alice.note.pk]
    assert [lr.pk for lr in memory.learnings] == [alice.learning.pk]
    assert [h.pk for h in memory.history] == [alice.history.pk]
    assert [(m.month, m.count) for m in memory.months] == [("2026-03", 1)]
    assert memory.counts == {
        "sessions": 1,
        "facts": 2,
        "entries": 3,
        "learnings": 1,
        "history": 1,
        "runs": 1,
    }
    html = response.content.decode()
    assert "alice eats fish on fridays" in html
    assert "alice MEMORY.md" not in html  # contents stay on the entry's page
    for other in (owners[AGENT], owners[BOB]):
        assert f"fact-{other.facts[0].pk}" not in html
        assert f"entry-{other.documents[0].pk}" not in html
        assert other.session.key not in html
        assert other.learning.content not in html
        assert other.history.content not in html


def test_the_user_page_links_to_the_filtered_lists(viewer_client, owners):
    html = viewer_client.get(ALICE_PAGE).content.decode()

    assert 'href="/review/agents/alice-bot/runs/?user=telegram%3A42">1 run</a>' in html
    assert 'href="/review/agents/alice-bot/history/2026-03/?user=telegram%3A42"' in html


def test_a_user_with_odd_characters_has_a_page(viewer_client, agent):
    name = "zoë <b>?#%&"
    SessionFactory(agent=agent, key="zoe-chat", user=name)

    index = viewer_client.get(USERS)
    [shown] = index.context["users"]
    response = viewer_client.get(shown.url)

    assert shown.url == USERS + "zo%C3%AB%20%3Cb%3E%3F%23%25&/"
    assert response.status_code == 200
    assert response.context["user_name"] == name
    html = response.content.decode()
    assert "zoë &lt;b&gt;?#%&amp;" in html
    assert "<b>?" not in html


@pytest.mark.parametrize(
    "user",
    ["nobody", "a%00b", "a%0Ab", "x" * 201, "%20", "..", "telegram:42%20"],
)
def test_a_user_with_no_row_or_no_valid_name_is_404(viewer_client, owners, user):
    assert viewer_client.get(f"{USERS}{user}/").status_code == 404


def test_the_agents_own_rows_have_no_user_page(viewer_client, owners):
    assert viewer_client.get(USERS + "/").status_code == 404


def test_the_erase_link_shows_for_editors_when_the_erasure_page_exists(
    viewer_client, editor_client, owners
):
    editor_html = editor_client.get(ALICE_PAGE).content.decode()
    viewer_html = viewer_client.get(ALICE_PAGE).content.decode()

    assert "Erase this user" not in viewer_html
    if _erase_route_exists():
        url = reverse("review:user_erase", args=["alice-bot", ALICE])
        assert f'<a class="danger erase-user" href="{url}">Erase this user…</a>' in editor_html
    else:
        assert "Erase this user" not in editor_html
