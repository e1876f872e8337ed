"""schemathesis's CLI, with `ast.parse` taken by one of its worker threads at a time.

CPython 3.11 keeps the AST converter's depth counter per interpreter, not per thread
(`struct ast_state` in Python/Python-ast.c). When a garbage collection inside one thread's
parse runs Python code and the other thread parses meanwhile, the first ends with "SystemError:
AST constructor recursion depth mismatch": hypothesis, describing a lambda under `--workers 2`,
turned that into a fuzz Runtime Error with every case passing (CI, 2026-11-27, seed 13). Two
threads parsing with `gc.set_threshold(1)` and a `__del__` that yields reproduce it within
seconds; behind one lock they never do. The lock costs nothing the fuzz measures: the parses
are hypothesis's own, client-side, and the server is untouched.

    .venv/bin/python .ci/schemathesis_serial_ast.py <schemathesis arguments>
"""

import ast
import sys
import threading

_parse = ast.parse
_lock = threading.Lock()


def serial_parse(*args, **kwargs):
    """ast.parse, one thread at a time."""
    with _lock:
        return _parse(*args, **kwargs)


ast.parse = serial_parse

if __name__ == "__main__":
    from schemathesis.cli import schemathesis

    sys.argv[0] = "schemathesis"
    sys.exit(schemathesis())
