"""The client's chat converter is imported from this checkout
(clients/python/src/memoryhub_client/chat.py), whatever else is installed: the server's
requirements do not install the client package, and a shared environment may hold an
editable install of another checkout, whose package would otherwise shadow this one."""

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "clients" / "python" / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

import memoryhub_client  # noqa: E402 - after the path it may come from

_HERE = str(SRC / "memoryhub_client")
if _HERE not in list(memoryhub_client.__path__):
    # Another checkout's package won the import: its submodules are looked up here first.
    memoryhub_client.__path__.insert(0, _HERE)
