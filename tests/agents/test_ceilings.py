"""Issue 13, settings: every numeric setting has a global maximum; the limits that protect the
service have per-team ceilings an admin sets; agents may lower them, never raise them past."""

import json
from dataclasses import fields

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.agents.config import CEILING_KEYS, NUMERIC, AgentConfig
from apps.agents.models import Agent, AuditEvent, Team
from apps.agents.services import membership_set, team_set_ceilings
from apps.core.errors import InvalidInput
from tests.factories import TeamFactory

pytestmark = pytest.mark.django_db

MIB = 1024 * 1024


def set_ceilings(agent, **ceilings) -> None:
    team_set_ceilings(team=agent.team, ceilings=ceilings)


def append(api, session, *contents: str):
    return api.post(
        f"/sessions/{session.id}/messages",
        {"messages": [{"role": "user", "content": c} for c in contents]},
    )


# --- global maxima -------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "value"), [("max_content_bytes", 10**12), ("recall_k", 10**20)])
def test_the_reported_huge_settings_are_422_and_later_calls_still_work(
    api, agent, session, key, value
):
    response = api.patch("/agent/settings", {"settings": {key: value}})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "settings", key]
    agent.refresh_from_db()
    assert agent.settings == {}
    assert append(api, session, "still fine").status_code == 201
    assert api.get("/agent").json()["settings"][key] == getattr(AgentConfig(), key)


def test_every_numeric_setting_has_a_maximum():
    numeric = {
        f.name for f in fields(AgentConfig) if type(getattr(AgentConfig(), f.name)) in (int, float)
    }
    assert set(NUMERIC) == numeric
    assert NUMERIC["max_content_bytes"].high == MIB
    assert NUMERIC["recall_k"].high == 100


@pytest.mark.parametrize("key", sorted(NUMERIC))
def test_a_value_over_each_maximum_is_422_and_the_maximum_itself_is_accepted(api, agent, key):
    bounds = NUMERIC[key]
    over = bounds.high + 1 if bounds.kind is int else bounds.high * 1.5

    rejected = api.patch("/agent/settings", {"settings": {key: over}})
    accepted = api.patch("/agent/settings", {"settings": {key: bounds.high}})

    assert rejected.status_code == 422
    assert rejected.json()["detail"][0]["loc"] == ["body", "settings", key]
    assert accepted.status_code == 200
    assert accepted.json()["settings"][key] == bounds.high
    agent.refresh_from_db()
    assert agent.settings == {key: bounds.high}


def test_stored_overrides_past_a_maximum_are_clamped_and_bad_ones_dropped_alone(api, agent):
    # As stored before the maxima existed (the 500s of issue 13), beside a good override.
    Agent.objects.filter(pk=agent.pk).update(
        settings={"max_content_bytes": 10**12, "recall_k": "lots", "memory_search_k": 7}
    )

    body = api.get("/agent").json()

    assert body["settings"]["max_content_bytes"] == MIB
    assert body["settings"]["recall_k"] == 5
    assert body["settings"]["memory_search_k"] == 7


# --- team ceilings: settings ---------------------------------------------------------------


def test_get_agent_reports_the_ceilings_global_maxima_by_default(api):
    body = api.get("/agent").json()

    assert body["ceilings"] == {key: NUMERIC[key].high for key in CEILING_KEYS}
    assert body["ceilings"]["max_content_bytes"] == MIB


def test_a_setting_over_the_team_ceiling_is_422_naming_key_and_ceiling(api, agent):
    set_ceilings(agent, recall_k=20)

    response = api.patch("/agent/settings", {"settings": {"recall_k": 21}})

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "loc": ["body", "settings", "recall_k"],
            "msg": "recall_k: 21 is over this team's ceiling of 20",
            "type": "value_error",
        }
    ]
    agent.refresh_from_db()
    assert agent.settings == {}


def test_an_agent_may_lower_a_limit_and_set_it_up_to_the_ceiling(api, agent):
    set_ceilings(agent, recall_k=20)

    lowered = api.patch("/agent/settings", {"settings": {"recall_k": 2}})
    at_ceiling = api.patch("/agent/settings", {"settings": {"recall_k": 20}})

    assert lowered.json()["settings"]["recall_k"] == 2
    assert at_ceiling.status_code == 200
    assert at_ceiling.json()["settings"]["recall_k"] == 20
    assert at_ceiling.json()["ceilings"]["recall_k"] == 20


def test_lowering_a_ceiling_clamps_a_higher_override_at_once(api, agent, session):
    api.patch("/agent/settings", {"settings": {"recall_k": 50, "max_content_bytes": 500_000}})

    set_ceilings(agent, recall_k=10, max_content_bytes=100)
    body = api.get("/agent").json()
    too_big = append(api, session, "x" * 101)

    assert body["overrides"] == {"recall_k": 50, "max_content_bytes": 500_000}
    assert body["settings"]["recall_k"] == 10
    assert body["settings"]["max_content_bytes"] == 100
    assert body["ceilings"]["recall_k"] == 10
    assert too_big.status_code == 413
    assert append(api, session, "x" * 100).status_code == 201


def test_a_ceiling_below_the_default_clamps_the_default(api, agent):
    set_ceilings(agent, max_history_messages=8)

    assert api.get("/agent").json()["settings"]["max_history_messages"] == 8


def test_ceilings_are_per_team(api, other_api, agent):
    set_ceilings(agent, recall_k=3)

    assert other_api.patch("/agent/settings", {"settings": {"recall_k": 50}}).status_code == 200
    assert api.patch("/agent/settings", {"settings": {"recall_k": 50}}).status_code == 422


def test_the_team_comes_with_the_agent_so_ceilings_cost_no_query(api, agent, session):
    set_ceilings(agent, recall_k=20)

    with CaptureQueriesContext(connection) as queries:
        shown = api.get("/agent")
        appended = append(api, session, "hello")

    assert (shown.status_code, appended.status_code) == (200, 201)
    assert shown.json()["ceilings"]["recall_k"] == 20
    assert [q["sql"] for q in queries if 'FROM "agents_team"' in q["sql"]] == []


# --- team ceilings: request-level numbers --------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "key", "field"),
    [
        ("/memory/recall", {"query": "tea", "k": 21}, "recall_k", "k"),
        ("/memory/search", {"query": "tea", "k": 21}, "memory_search_k", "k"),
        ("/context", {"session_id": "chat-1", "max_tokens": 21}, "context_max_tokens",
         "max_tokens"),
    ],
)  # fmt: skip
def test_a_request_number_over_the_team_ceiling_is_422(api, agent, session, path, body, key, field):
    set_ceilings(agent, **{key: 20})

    response = api.post(path, body)

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "loc": ["body", field],
            "msg": f"21 is over this team's ceiling of 20 ({key})",
            "type": "value_error",
        }
    ]


def test_a_request_number_at_the_team_ceiling_is_served(api, agent, session):
    set_ceilings(agent, memory_search_k=20, context_max_tokens=2000)

    search = api.post("/memory/search", {"query": "tea", "k": 20})
    context = api.post("/context", {"session_id": "chat-1", "max_tokens": 2000})

    assert search.status_code == 200
    assert context.status_code == 200
    assert context.json()["usage"]["max_tokens"] == 2000


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/memory/recall", {"query": "tea", "k": 101}, "k"),
    ("/memory/search", {"query": "tea", "k": 101}, "k"),
    ("/context", {"session_id": "chat-1", "max_tokens": 10_000_001}, "max_tokens"),
])  # fmt: skip
def test_request_numbers_over_the_global_maximum_are_422(api, session, path, body, field):
    response = api.post(path, body)

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == field


def test_the_batch_size_ceiling_bounds_appends(api, agent, session):
    set_ceilings(agent, max_batch_messages=2)

    refused = append(api, session, "a", "b", "c")
    stored = append(api, session, "a", "b")

    assert refused.status_code == 413
    assert refused.json()["detail"] == "at most 2 messages per request, got 3"
    assert stored.status_code == 201
    assert stored.json()["created"] == 2


def test_an_agent_may_lower_its_own_batch_size(api, session):
    api.patch("/agent/settings", {"settings": {"max_batch_messages": 1}})

    assert append(api, session, "a", "b").status_code == 413
    assert append(api, session, "a").status_code == 201


# --- validating ceilings -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ceilings", "loc", "msg"),
    [
        ({"nope": 1}, ["ceilings", "nope"], "'nope' has no ceiling"),
        ({"memory_window": 5}, ["ceilings", "memory_window"], "'memory_window' has no ceiling"),
        ({"recall_k": 101}, ["ceilings", "recall_k"],
         "recall_k: 101 is outside 1..100 (the global maximum)"),
        ({"recall_k": 0}, ["ceilings", "recall_k"],
         "recall_k: 0 is outside 1..100 (the global maximum)"),
        ({"recall_k": "5"}, ["ceilings", "recall_k"], "recall_k: must be a whole number"),
        ({"recall_k": True}, ["ceilings", "recall_k"], "recall_k: must be a whole number"),
        ({"recall_k": 5.5}, ["ceilings", "recall_k"], "recall_k: must be a whole number"),
        ({"consolidation_timeout_seconds": "5"}, ["ceilings", "consolidation_timeout_seconds"],
         "consolidation_timeout_seconds: must be a number"),
        ({"consolidation_timeout_seconds": 0}, ["ceilings", "consolidation_timeout_seconds"],
         "consolidation_timeout_seconds: 0 is outside 0..600.0 (the global maximum)"),
        ({"consolidation_timeout_seconds": float("nan")}, ["ceilings",
         "consolidation_timeout_seconds"],
         "consolidation_timeout_seconds: nan is outside 0..600.0 (the global maximum)"),
        ([1], ["ceilings"], "ceilings must be an object of setting: ceiling"),
    ],
)  # fmt: skip
def test_bad_ceilings_are_refused_and_not_saved(agent, ceilings, loc, msg):
    with pytest.raises(InvalidInput) as caught:
        team_set_ceilings(team=agent.team, ceilings=ceilings)

    assert (caught.value.loc, caught.value.message) == (loc, msg)
    assert Team.objects.get(pk=agent.team_id).ceilings == {}


def test_a_ceiling_at_the_global_maximum_is_not_stored(agent):
    ceilings = {"recall_k": 100, "max_content_bytes": 4096, "consolidation_timeout_seconds": 12.5}

    team_set_ceilings(team=agent.team, ceilings=ceilings)

    assert Team.objects.get(pk=agent.team_id).ceilings == {
        "max_content_bytes": 4096,
        "consolidation_timeout_seconds": 12.5,
    }


# --- the admin -----------------------------------------------------------------------------


@pytest.fixture
def root():
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", "r@example.com", "pw"))
    return client


def _team_post(team: Team, ceilings: str) -> dict[str, str]:
    return {"name": team.name, "ceilings": ceilings,
            "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0",
            "agents-TOTAL_FORMS": "0", "agents-INITIAL_FORMS": "0"}  # fmt: skip


def test_the_team_admin_explains_and_saves_ceilings_with_an_audit_event(root):
    team = TeamFactory(name="ops")
    url = f"/admin/agents/team/{team.pk}/change/"

    page = root.get(url).content.decode()
    response = root.post(url, _team_post(team, json.dumps({"recall_k": 20})))

    assert "The team's agents may lower these settings" in page
    assert "<li><code>recall_k</code> ≤ 100</li>" in page
    assert "<li><code>max_content_bytes</code> ≤ 1,048,576</li>" in page
    assert response.status_code == 302
    team.refresh_from_db()
    assert team.ceilings == {"recall_k": 20}
    event = AuditEvent.objects.get(action="team.update")
    assert (event.before, event.after) == ({"ceilings": {}}, {"ceilings": {"recall_k": 20}})


@pytest.mark.parametrize(
    ("ceilings", "error"),
    [
        ('{"recall_k": 1000}', "recall_k: 1000 is outside 1..100 (the global maximum)"),
        ('{"nope": 1}', "&#x27;nope&#x27; has no ceiling"),
    ],
)
def test_the_team_admin_refuses_bad_ceilings(root, ceilings, error):
    team = TeamFactory(name="ops")

    response = root.post(f"/admin/agents/team/{team.pk}/change/", _team_post(team, ceilings))

    assert response.status_code == 200
    assert error in response.content.decode()
    team.refresh_from_db()
    assert team.ceilings == {}


def test_staff_of_the_team_see_but_cannot_change_its_ceilings(agent):
    user = get_user_model().objects.create_user("sam", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=["view_team", "change_team"]))
    membership_set(team=agent.team, user=user, role="editor")
    set_ceilings(agent, recall_k=7)
    client = Client()
    client.force_login(user)

    page = client.get(f"/admin/agents/team/{agent.team_id}/change/").content.decode()

    assert 'name="ceilings"' not in page
    assert "recall_k" in page


@pytest.mark.parametrize(
    ("settings", "error"),
    [
        ('{"recall_k": 50}', "recall_k: 50 is over this team&#x27;s ceiling of 20"),
        ('{"recall_k": 1000}', "recall_k: Input should be less than or equal to 100"),
        ('{"nope": 1}', "unknown setting &#x27;nope&#x27;"),
    ],
)
def test_the_agent_admin_validates_overrides_like_the_api(root, agent, settings, error):
    set_ceilings(agent, recall_k=20)
    post = {"slug": agent.slug, "name": agent.name, "team": agent.team_id, "settings": settings,
            "created_at_0": "2026-01-01", "created_at_1": "00:00:00",
            "api_keys-TOTAL_FORMS": "0", "api_keys-INITIAL_FORMS": "0"}  # fmt: skip

    response = root.post(f"/admin/agents/agent/{agent.pk}/change/", post)
    accepted = root.post(
        f"/admin/agents/agent/{agent.pk}/change/", {**post, "settings": '{"recall_k": 20}'}
    )

    assert response.status_code == 200
    assert error in response.content.decode()
    assert accepted.status_code == 302
    agent.refresh_from_db()
    assert agent.settings == {"recall_k": 20}
