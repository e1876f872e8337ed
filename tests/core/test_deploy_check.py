"""`manage.py check --deploy` in a fresh process: MEMORYHUB_HTTPS=1 with a strong secret
passes at --fail-level WARNING; without the switch the HTTPS warnings are there."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
HTTPS_WARNINGS = ["security.W004", "security.W008", "security.W012", "security.W016"]


def _manage(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYHUB_", "DJANGO_"))}
    base.update(
        DJANGO_SETTINGS_MODULE="memoryhub.settings.base",  # production settings, not tests'
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="memory.example.com",
        MEMORYHUB_DATA_DIR=str(tmp_path),
        **env,
    )
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=base, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _check(tmp_path, **env: str) -> subprocess.CompletedProcess:
    return _manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **env)


def test_without_the_switch_check_deploy_reports_the_https_warnings(tmp_path):
    result = _check(tmp_path)

    assert result.returncode == 1
    found = sorted(w for w in HTTPS_WARNINGS if f"({w})" in result.stderr)
    assert found == HTTPS_WARNINGS
    assert "System check identified 4 issues (0 silenced)." in result.stderr


def test_with_https_on_check_deploy_passes_at_warning_level(tmp_path):
    result = _check(tmp_path, MEMORYHUB_HTTPS="1")

    assert (result.returncode, result.stderr) == (0, "")
    # HSTS for subdomains and preloading are the domain owner's choice (docs/deploy.md).
    assert result.stdout == "System check identified no issues (2 silenced).\n"


def test_opting_into_hsts_subdomains_still_passes(tmp_path):
    result = _check(tmp_path, MEMORYHUB_HTTPS="1", MEMORYHUB_HSTS_INCLUDE_SUBDOMAINS="1")

    assert (result.returncode, result.stdout) == (
        0,
        "System check identified no issues (1 silenced).\n",
    )


@pytest.mark.parametrize("switch", ["1", "0"])
def test_the_switch_sets_every_https_setting(tmp_path, switch):
    names = [
        "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_PROXY_SSL_HEADER",
        "SECURE_REDIRECT_EXEMPT",
    ]  # fmt: skip
    script = (
        "import json; from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n) for n in {names!r}}}))"
    )

    result = _manage(tmp_path, "shell", "-v", "0", "-c", script, MEMORYHUB_HTTPS=switch)

    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    if switch == "1":
        assert values == {
            "SECURE_SSL_REDIRECT": True,
            "SECURE_HSTS_SECONDS": 31_536_000,
            "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
            "SESSION_COOKIE_SECURE": True,
            "CSRF_COOKIE_SECURE": True,
            "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
            "SECURE_REDIRECT_EXEMPT": ["^healthz$"],
        }
    else:
        assert values == {
            "SECURE_SSL_REDIRECT": False,
            "SECURE_HSTS_SECONDS": 0,
            "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
            "SESSION_COOKIE_SECURE": False,
            "CSRF_COOKIE_SECURE": False,
            "SECURE_PROXY_SSL_HEADER": None,
            "SECURE_REDIRECT_EXEMPT": [],
        }


def test_behind_a_tls_proxy_healthz_stays_plain_and_the_rest_redirects(settings, db):
    # The values MEMORYHUB_HTTPS=1 sets (proved above), applied in this process.
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 31_536_000
    client = Client()
    plain_home = client.get("/")
    plain_health = client.get("/healthz")
    proxied = client.get("/", headers={"X-Forwarded-Proto": "https"})

    assert (plain_home.status_code, plain_home["Location"]) == (301, "https://testserver/")
    assert plain_health.status_code == 200
    assert proxied.status_code == 200
    assert proxied["Strict-Transport-Security"] == "max-age=31536000"
