"""The documentation's examples against the real server: pytest-django's live server on
the test database (transactional, so the server thread sees what a test wrote)."""

from tests.support.live import agent, key, live_url  # noqa: F401  (shared fixtures)
