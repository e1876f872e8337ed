import pytest

from tests.users.world import World, build


@pytest.fixture
def world(api, django_capture_on_commit_callbacks) -> World:
    """Alice's, Caroline's and the agent's memory, every message and fact embedded (the
    embedding tasks run on commit), so every search leg has something to find."""
    with django_capture_on_commit_callbacks(execute=True):
        return build(api)
