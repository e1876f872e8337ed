import os
import subprocess
import sys
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


def test_bootstrap_prints_the_address_of_the_port_it_serves(db, settings):
    settings.MEMORYHUB_PUBLIC_URL = "http://127.0.0.1:8766"

    (banner, login, *_) = _run("bootstrap")

    assert banner == (
        "memoryhub is at http://127.0.0.1:8766  (review http://127.0.0.1:8766/review/, "
        "API docs http://127.0.0.1:8766/api/v1/docs, admin http://127.0.0.1:8766/admin/)"
    )
    assert login == "Log in at http://127.0.0.1:8766/accounts/login/"
    assert Client().get("/accounts/login/").status_code == 200


def test_the_public_url_follows_port_unless_set(tmp_path):
    def public_url(**env):
        code = "from django.conf import settings; print(settings.MEMORYHUB_PUBLIC_URL)"
        environ = {k: v for k, v in os.environ.items() if k not in ("PORT", "MEMORYHUB_PUBLIC_URL")}
        out = subprocess.run(
            [sys.executable, "-c", f"import django; django.setup(); {code}"],
            env={**environ, "DJANGO_SETTINGS_MODULE": "memoryhub.settings.base",
                 "MEMORYHUB_DATA_DIR": str(tmp_path), **env},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return out.stdout.strip()

    assert public_url() == "http://127.0.0.1:8000"
    assert public_url(PORT="8766") == "http://127.0.0.1:8766"
    assert public_url(PORT="8766", MEMORYHUB_PUBLIC_URL="https://m.example.com/") == (
        "https://m.example.com"
    )


def test_create_user_makes_a_viewer_by_default_and_prints_the_password_last(db, monkeypatch):
    monkeypatch.delenv("MEMORYHUB_PASSWORD", raising=False)

    lines = _run("create_user", "vera", "--team", "Support")

    user = get_user_model().objects.get(username="vera")
    assert lines[:2] == ["Created user 'vera', viewer of team 'Support'.", "Password (shown once):"]
    assert len(lines) == 3
    assert Client().login(username="vera", password=lines[-1])
    assert list(user.memberships.values_list("team__name", "role")) == [("Support", "viewer")]
    assert (user.is_staff, user.is_superuser) == (False, False)


def test_create_user_editor_and_staff(db, monkeypatch):
    monkeypatch.delenv("MEMORYHUB_PASSWORD", raising=False)

    _run("create_user", "eddie", "--team", "Support", "--editor", "--staff")

    user = get_user_model().objects.get(username="eddie")
    assert list(user.memberships.values_list("team__name", "role")) == [("Support", "editor")]
    assert (user.is_staff, user.is_superuser) == (True, False)


def test_create_user_takes_the_password_from_the_environment_and_does_not_print_it(db, monkeypatch):
    monkeypatch.setenv("MEMORYHUB_PASSWORD", "correct-horse-battery")

    lines = _run("create_user", "vera", "--team", "Support")

    assert lines == ["Created user 'vera', viewer of team 'Support'."]
    assert Client().login(username="vera", password="correct-horse-battery")


def test_create_user_twice_fails_cleanly(db, monkeypatch):
    monkeypatch.setenv("MEMORYHUB_PASSWORD", "pw-123456789")
    _run("create_user", "vera", "--team", "Support")

    with pytest.raises(CommandError, match="user 'vera' already exists"):
        _run("create_user", "vera", "--team", "Other", "--editor")
    assert get_user_model().objects.filter(username="vera").count() == 1
    assert (
        not get_user_model()
        .objects.get(username="vera")
        .memberships.filter(team__name="Other")
        .exists()
    )


def test_create_api_key_binds_a_user_and_read_only_and_prints_its_scope(db):
    _run("create_agent", "helper")

    out = _run("create_api_key", "helper", "--user", " telegram:1 ", "--read-only")

    assert out[-2] == "New API key for 'helper' (user telegram:1, read-only; shown once):"
    stored = ApiKey.objects.get(agent__slug="helper", read_only=True)
    assert (stored.user, stored.read_only) == ("telegram:1", True)
    api = ApiClient(key=out[-1], client=Client())
    assert api.get("/facts").status_code == 200
    assert api.get("/facts", {"user": "telegram:2"}).status_code == 403
    assert api.post("/facts", {"value": "x"}).status_code == 403


def test_create_api_key_refuses_a_user_that_is_no_user(db):
    _run("create_agent", "helper")

    with pytest.raises(CommandError, match="--user: user must be 1-200 printable characters"):
        _run("create_api_key", "helper", "--user", "   ")
    assert ApiKey.objects.filter(agent__slug="helper").count() == 1


def test_create_api_key_refuses_a_name_over_100_characters(db):
    _run("create_agent", "helper")

    with pytest.raises(CommandError, match="--name: name must be at most 100 characters"):
        _run("create_api_key", "helper", "--name", "n" * 101)
    assert ApiKey.objects.filter(agent__slug="helper").count() == 1
