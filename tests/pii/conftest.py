from tests.support.live import agent, key, live_url  # noqa: F401  (shared fixtures)
