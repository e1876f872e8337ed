"""The test worker is real: a task crosses the configured broker and runs in the worker."""

import threading
import time

import pytest

from memoryhub.celery import app

ran_in = {}


@app.task(name="tests.record_thread")
def record_thread(token: str) -> None:
    ran_in[token] = threading.current_thread().name


@pytest.mark.celery_worker
def test_task_goes_through_the_broker_to_the_worker(celery_worker):
    record_thread.delay("t1")

    deadline = time.monotonic() + 30
    while "t1" not in ran_in and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "t1" in ran_in
    assert ran_in["t1"] != threading.current_thread().name
