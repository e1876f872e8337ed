"""langchain-core's tests against the live server (tests/upstream/README.md)."""

from tests.upstream.live import memoryhub_env  # noqa: F401  (autouse: the live server)

# The untouched upstream copies, kept for the diff.
collect_ignore = ["upstream"]
