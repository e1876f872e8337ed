"""Rate limits through real requests: wrong API keys per client address (/api/v1 and /mcp
share one count), the optional per-key rate, and password-login lockout (admin, review)."""

from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.test import Client

from tests.factories import issue_key

pytestmark = pytest.mark.django_db

WRONG = "Bearer mh_nope_wrongsecret"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _get(client: Client, authorization: str, **meta):
    return client.get("/api/v1/sessions", headers={"Authorization": authorization}, **meta)


def _mcp(client: Client, authorization: str, **meta):
    return client.post(
        "/mcp", "{}", content_type="application/json",
        headers={"Authorization": authorization}, **meta,
    )  # fmt: skip


def _assert_throttled(response, detail_start: str) -> int:
    assert response.status_code == 429
    assert response.json()["detail"].startswith(detail_start)
    wait = int(response["Retry-After"])
    assert 1 <= wait <= 60
    assert response.json()["detail"].endswith(f"retry in {wait} s")
    return wait


def test_the_31st_wrong_key_in_a_minute_is_429_and_blocks_the_address(agent):
    client, key = Client(), issue_key(agent)

    statuses = [_get(client, WRONG).status_code for _ in range(30)]
    blocked = _get(client, WRONG)
    # Once blocked, even the right key is refused from that address: otherwise a guess that
    # happens to be right would still be told apart.
    right_key_same_address = _get(client, f"Bearer {key}")
    other_address = _get(client, f"Bearer {key}", REMOTE_ADDR="198.51.100.20")

    assert statuses == [401] * 30
    _assert_throttled(blocked, "too many failed API-key attempts from this address")
    _assert_throttled(right_key_same_address, "too many failed API-key attempts")
    assert other_address.status_code == 200


def test_the_block_lifts_a_minute_after_the_first_failure(agent):
    client, key = Client(), issue_key(agent)

    with time_machine.travel(T0, tick=False) as clock:
        assert [_get(client, WRONG).status_code for _ in range(30)] == [401] * 30
        clock.shift(40)
        blocked = _get(client, f"Bearer {key}")
        clock.shift(20)
        lifted = _get(client, f"Bearer {key}")
        fresh_window = [_get(client, WRONG).status_code for _ in range(30)]

    assert blocked.json()["detail"].endswith("retry in 20 s")
    assert blocked["Retry-After"] == "20"
    assert lifted.status_code == 200
    assert fresh_window == [401] * 30


def test_api_and_mcp_share_one_count_per_address(agent):
    client = Client()

    api = [_get(client, WRONG).status_code for _ in range(20)]
    mcp = [_mcp(client, WRONG).status_code for _ in range(10)]
    blocked = _mcp(client, WRONG)

    assert (api, mcp) == ([401] * 20, [401] * 10)
    assert blocked["Content-Type"] == "application/json"
    _assert_throttled(blocked, "too many failed API-key attempts from this address")
    assert _get(client, WRONG).status_code == 429


def test_a_missing_header_is_not_a_guess_and_a_good_key_is_never_counted(agent):
    client, key = Client(), issue_key(agent)

    for _ in range(40):
        assert client.get("/api/v1/sessions").status_code == 401
        assert _get(client, f"Bearer {key}").status_code == 200

    assert _get(client, WRONG).status_code == 401


def test_x_forwarded_for_is_ignored_unless_proxies_are_trusted(agent, settings):
    client = Client()

    # Default: a client cannot dodge the limit by inventing an address per request.
    for i in range(30):
        assert _get(client, WRONG, HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code == 401
    assert _get(client, WRONG, HTTP_X_FORWARDED_FOR="203.0.113.99").status_code == 429

    # Behind one trusted proxy (REMOTE_ADDR 10.0.0.1), the entry it appended is the client.
    settings.MEMORYHUB_TRUSTED_PROXIES = 1
    proxy = {"REMOTE_ADDR": "10.0.0.1"}
    for _ in range(30):
        assert _get(client, WRONG, HTTP_X_FORWARDED_FOR="203.0.113.7", **proxy).status_code == 401
    # The same client forging an entry of its own: the proxy's entry is still last.
    forged = _get(client, WRONG, HTTP_X_FORWARDED_FOR="192.0.2.1, 203.0.113.7", **proxy)
    neighbour = _get(client, WRONG, HTTP_X_FORWARDED_FOR="203.0.113.8", **proxy)

    assert forged.status_code == 429
    assert neighbour.status_code == 401


def test_the_per_key_rate_when_set(agent, other_agent, settings):
    settings.MEMORYHUB_KEY_RATE_PER_MINUTE = 3
    client, key, other = Client(), issue_key(agent), issue_key(other_agent)

    statuses = [_get(client, f"Bearer {key}").status_code for _ in range(3)]
    over = _get(client, f"Bearer {key}")

    assert statuses == [200, 200, 200]
    _assert_throttled(over, "this API key is over its 3 requests per minute")
    assert _get(client, f"Bearer {other}").status_code == 200
    assert _mcp(client, f"Bearer {key}").status_code == 429  # the same key, the same rate


def test_no_per_key_rate_by_default(agent):
    client, key = Client(), issue_key(agent)

    assert [_get(client, f"Bearer {key}").status_code for _ in range(35)] == [200] * 35


# --- password logins -------------------------------------------------------------------

INVALID = "Please enter a correct username and password"
LOCKED = "Too many failed logins for this account from your address. Try again in 15 minutes."


def _login(url: str, username: str, password: str, **meta):
    return Client().post(url, {"username": username, "password": password}, **meta)


@pytest.mark.parametrize(
    ("url", "staff", "invalid"),
    [
        ("/admin/login/", True, "Please enter the correct username and password for a staff"),
        ("/accounts/login/", False, INVALID),
    ],
)
def test_logins_lock_out_after_five_failures_per_username_and_address(url, staff, invalid):
    get_user_model().objects.create_user("ada", password="correct horse 42", is_staff=staff)

    failures = [_login(url, "ada", f"guess {i}") for i in range(5)]
    locked = _login(url, "Ada", "correct horse 42")  # right password, same user and address
    elsewhere = _login(url, "ada", "correct horse 42", REMOTE_ADDR="198.51.100.20")

    assert [(r.status_code, invalid in r.content.decode()) for r in failures] == [(200, True)] * 5
    assert locked.status_code == 200  # the form again, not the redirect of a login
    assert LOCKED in locked.content.decode()
    assert "_auth_user_id" not in locked.client.session
    assert elsewhere.status_code == 302


def test_a_lockout_lasts_fifteen_minutes():
    get_user_model().objects.create_user("ada", password="correct horse 42")

    with time_machine.travel(T0, tick=False) as clock:
        for i in range(5):
            _login("/accounts/login/", "ada", f"guess {i}")
        clock.shift(14 * 60 + 1)
        still = _login("/accounts/login/", "ada", "correct horse 42")
        clock.shift(59)
        free = _login("/accounts/login/", "ada", "correct horse 42")

    assert "Try again in 1 minute." in still.content.decode()
    assert free.status_code == 302


def test_a_successful_login_clears_the_failures():
    get_user_model().objects.create_user("ada", password="correct horse 42")

    for _ in range(2):
        for i in range(4):
            assert INVALID in _login("/accounts/login/", "ada", f"guess {i}").content.decode()
        assert _login("/accounts/login/", "ada", "correct horse 42").status_code == 302


def test_an_address_spraying_many_usernames_is_locked_out(settings):
    settings.MEMORYHUB_LOGIN_ADDRESS_FAILURE_LIMIT = 12
    get_user_model().objects.create_user("ada", password="correct horse 42")
    get_user_model().objects.create_user("bob", password="battery staple 7")

    # Four guesses at each of three names: under the per-name limit, at the address limit.
    sprayed = [_login("/accounts/login/", name, f"guess {i}") for name in "xyz" for i in range(4)]
    own = _login("/accounts/login/", "bob", "battery staple 7")  # a real account's password
    after_own = _login("/accounts/login/", "ada", "correct horse 42")
    elsewhere = _login("/accounts/login/", "ada", "correct horse 42", REMOTE_ADDR="198.51.100.20")

    assert all(INVALID in r.content.decode() for r in sprayed)
    for refused in (own, after_own):
        assert refused.status_code == 200
        assert (
            "Too many failed logins from your address. Try again in 15 minutes."
            in refused.content.decode()
        )
    assert elsewhere.status_code == 302
