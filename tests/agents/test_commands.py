from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from apps.agents.models import Agent, ApiKey
from tests.support.client import ApiClient

pytestmark = pytest.mark.django_db


def _run(*args) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()


def test_create_agent_prints_a_working_key_last(db):
    lines = _run("create_agent", "support-bot", "--team", "Support")

    agent = Agent.objects.get(slug="support-bot")
    assert agent.team.name == "Support"
    key = lines[-1]
    assert ApiClient(key=key, client=Client()).get("/agent").json()["slug"] == "support-bot"


def test_create_agent_twice_fails_cleanly(db):
    _run("create_agent", "dup")

    with pytest.raises(CommandError, match="already exists"):
        _run("create_agent", "dup")
    assert ApiKey.objects.count() == 1


def test_create_agent_rejects_a_bad_slug(db):
    with pytest.raises(CommandError, match="slug"):
        _run("create_agent", "Not A Slug")


def test_create_api_key_adds_a_second_key(db):
    _run("create_agent", "helper")

    key = _run("create_api_key", "helper")[-1]

    assert ApiKey.objects.filter(agent__slug="helper").count() == 2
    assert ApiClient(key=key, client=Client()).get("/agent").status_code == 200


def test_create_api_key_for_unknown_agent_fails(db):
    with pytest.raises(CommandError, match="no agent 'ghost'"):
        _run("create_api_key", "ghost")


def test_bootstrap_creates_admin_and_demo_once(db):
    first = "\n".join(_run("bootstrap"))
    second = "\n".join(_run("bootstrap"))

    assert "Admin login: admin / " in first
    assert "Demo agent 'demo' API key: mh_" in first
    assert "Admin login" not in second
    assert "API key" not in second
    assert get_user_model().objects.filter(is_superuser=True).count() == 1
    password = first.split("Admin login: admin / ")[1].split()[0]
    assert Client().login(username="admin", password=password)
