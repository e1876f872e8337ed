"""Every client method was called, with success, on MemoryHub and on AsyncMemoryHub by the
tests of this directory (conftest.py records each hub's answers and moves this test last)."""

from memoryhub_client._call import OPERATIONS

from tests.clients.conftest import CALLED, HUBS, RUN


def test_every_client_method_was_called_on_both_hubs():
    assert RUN["whole"]  # conftest deselects this check from partial runs
    missing = sorted(
        f"{kind}: {op.qualname} ({method} {path})"
        for kind in HUBS
        for (method, path), op in OPERATIONS.items()
        if (kind, method, path) not in CALLED
    )

    assert missing == []
