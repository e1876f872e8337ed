import json
import re
from pathlib import Path

import pytest
from django.conf import settings

from apps.agents.config import AgentConfig

pytestmark = pytest.mark.django_db


def test_agent_profile_shows_seed_defaults(api):
    body = api.get("/agent").json()

    assert body["slug"] == "alice-bot"
    assert body["overrides"] == {}
    assert body["settings"]["max_history_messages"] == 16
    assert body["settings"]["max_history_bytes"] == 5 * 1024 * 1024
    assert body["settings"]["compact_target_ratio"] == 0.8
    assert body["settings"]["error_memory_ttl_days"] == 90
    assert body["settings"]["relevance_threshold"] == 0.655
    assert body["settings"]["working_memory_cap"] == 50
    assert body["settings"]["consolidation_interval_hours"] == 6
    assert body["settings"]["max_memory_bytes"] == 8192
    assert body["settings"]["consolidation_timeout_seconds"] == 30.0
    assert body["settings"] == AgentConfig().as_dict()


def test_override_and_restore_a_setting(api, agent):
    changed = api.patch("/agent/settings", {"settings": {"max_history_messages": 8}})
    restored = api.patch("/agent/settings", {"settings": {"max_history_messages": None}})

    assert changed.status_code == 200
    assert changed.json()["settings"]["max_history_messages"] == 8
    assert changed.json()["overrides"] == {"max_history_messages": 8}
    assert restored.json()["settings"]["max_history_messages"] == 16
    agent.refresh_from_db()
    assert agent.settings == {}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"no_such_setting": 1}, "no_such_setting"),
        ({"max_history_messages": 0}, "max_history_messages"),
        ({"compact_target_ratio": 1.5}, "compact_target_ratio"),
        ({"max_history_messages": "lots"}, "max_history_messages"),
    ],
)
def test_bad_settings_are_422_and_not_saved(api, agent, changes, field):
    response = api.patch("/agent/settings", {"settings": changes})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "settings", field]
    agent.refresh_from_db()
    assert agent.settings == {}


def test_the_readmes_settings_call_works_as_shown(api):
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    (body,) = re.findall(r"-d '(\{\"settings\".*?)' \$URL/agent/settings", readme)

    response = api.patch("/agent/settings", json.loads(body))

    assert response.status_code == 200
    assert response.json()["overrides"] == {"max_history_messages": 24, "fact_review": True}
