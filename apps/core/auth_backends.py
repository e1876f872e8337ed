"""Password logins (admin, review) that lock out after repeated failures, per username and
client address, and per address across usernames (password spraying), through the shared
cache (apps/core/throttle.py)."""

import hashlib
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from apps.core.throttle import Window, client_address


def _window() -> Window:
    return Window(
        "login-failures",
        settings.MEMORYHUB_LOGIN_FAILURE_LIMIT,
        settings.MEMORYHUB_LOGIN_LOCKOUT_SECONDS,
    )


def _address_window() -> Window:
    return Window(
        "login-failures-address",
        settings.MEMORYHUB_LOGIN_ADDRESS_FAILURE_LIMIT,
        settings.MEMORYHUB_LOGIN_LOCKOUT_SECONDS,
    )


def _key(request: HttpRequest, username: str) -> str:
    # Hashed: a username may hold spaces or anything else a cache key should not.
    who = f"{username.casefold()}\0{client_address(request)}"
    return hashlib.sha256(who.encode("utf-8", "surrogatepass")).hexdigest()


def locked_out_message(wait: int, *, whom: str = "for this account from your address") -> str:
    minutes = max(1, -(-wait // 60))
    unit = "minute" if minutes == 1 else "minutes"
    return f"Too many failed logins {whom}. Try again in {minutes} {unit}."


class LockoutModelBackend(ModelBackend):
    """ModelBackend, refusing a username+address with MEMORYHUB_LOGIN_FAILURE_LIMIT failures,
    or an address with MEMORYHUB_LOGIN_ADDRESS_FAILURE_LIMIT over all usernames, in the last
    MEMORYHUB_LOGIN_LOCKOUT_SECONDS, right password or not. The refusal is a ValidationError,
    which the login forms (admin and /accounts/login/) show as it is."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,  # Any: ModelBackend.authenticate's own keyword arguments
    ) -> User | None:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if request is None or username is None or password is None:
            return super().authenticate(request, username=username, password=password, **kwargs)
        key, window = _key(request, str(username)), _window()
        address, address_window = client_address(request), _address_window()
        if wait := window.blocked(key):
            raise ValidationError(locked_out_message(wait), code="locked_out")
        if wait := address_window.blocked(address):
            whom = "from your address"
            raise ValidationError(locked_out_message(wait, whom=whom), code="locked_out")
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            window.hit(key)
            address_window.hit(address)
        else:
            # The address count is not reset: one account's own password must not buy
            # a sprayer a fresh round against the others.
            window.reset(key)
        return user
