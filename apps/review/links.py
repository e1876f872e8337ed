"""Links to a user's pages (issue 26). A user is a string the agent chose: the path takes
it as one segment (<str:user>), so a user holding "/" (or named "." or "..", which a
browser would fold into the path) has no page, and the pages show them unlinked."""

from django.urls import NoReverseMatch, reverse

_UNADDRESSABLE = {".", ".."}


def user_url(slug: str, user: str, name: str = "user") -> str | None:
    """The URL of the user's page (`name`: "user", or "user_erase" for the erasure's
    confirmation), or None when the user, or that page, cannot be addressed."""
    if not user or user in _UNADDRESSABLE:
        return None
    try:
        return reverse(f"review:{name}", args=[slug, user])
    except NoReverseMatch:  # a "/" in the user; or user_erase is not installed yet
        return None
