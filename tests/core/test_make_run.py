"""`make run` in a terminal: Ctrl-C stops web, worker and beat and exits 0 (a clean stop,
not make's "Error 130" or "Interrupt"). The test is a real terminal (a pty) typing Ctrl-C."""

import os
import pty
import re
import signal
import sqlite3
import time
from pathlib import Path

from django.conf import settings

from bench._http import free_port
from tests.support.services import INHERITED_OUT

ROOT = Path(settings.BASE_DIR)


def _read_until(fd: int, pattern: str, timeout: float) -> str:
    seen, deadline = b"", time.monotonic() + timeout
    while not re.search(pattern, seen.decode(errors="replace")):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {pattern!r} in {timeout:.0f} s:\n{seen.decode()[-3000:]}")
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal closed: everything exited
            break
        seen += chunk
    return seen.decode(errors="replace")


def _wait_for_beats_schedule(database: Path, timeout: float) -> None:
    """Until beat has written every entry of the schedule: a Ctrl-C while it still writes
    them interrupts that write (a traceback, though every process still stops)."""
    wanted, deadline = set(settings.CELERY_BEAT_SCHEDULE), time.monotonic() + timeout
    while True:
        try:
            with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as db:
                names = {
                    n for (n,) in db.execute("SELECT name FROM django_celery_beat_periodictask")
                }
        except sqlite3.OperationalError:  # not migrated yet, or locked for a moment
            names = set()
        if wanted <= names:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"beat wrote {sorted(names)} of {sorted(wanted)}")
        time.sleep(0.2)


def test_ctrl_c_in_a_terminal_stops_make_run_cleanly_with_status_0(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in INHERITED_OUT and not k.startswith(("MEMORYHUB_", "PYTEST"))
    }
    env.update(MEMORYHUB_DATA_DIR=str(tmp_path), TERM="dumb")
    pid, fd = pty.fork()
    if pid == 0:  # the child: a shell in the terminal, as a person types the command
        os.chdir(ROOT)
        os.execvpe("bash", ["bash", "-c", f"make run PORT={free_port()}; echo EXIT=$?"], env)
    try:
        started = _read_until(fd, r"celery@\S+ ready", timeout=240)
        _wait_for_beats_schedule(tmp_path / "memoryhub.sqlite3", timeout=120)
        os.write(fd, b"\x03")  # Ctrl-C, as typed: SIGINT to the terminal's foreground group
        stopped = _read_until(fd, r"EXIT=\d+", timeout=60)
    finally:
        if os.waitpid(pid, os.WNOHANG)[0] == 0:  # still running (a failure above): stop it
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)

    assert "Log in at http://" in started
    assert "EXIT=0" in stopped, stopped[-2000:]
    assert "Error" not in stopped
    assert "Interrupt" not in stopped
    assert {"web.1 stopped", "worker.1 stopped", "beat.1 stopped"} <= set(
        re.findall(r"\w+\.1 stopped", stopped)
    )
