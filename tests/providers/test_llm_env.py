"""The LLM's environment variables, read by the production settings in a fresh process."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRINT = (
    "import json; from django.conf import settings; "
    "print(json.dumps(settings.MEMORYHUB_PROVIDERS['llm']['CONFIG']))"
)


def _llm_config(tmp_path, **env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYHUB_", "DJANGO_"))}
    base.update(
        DJANGO_SETTINGS_MODULE="memoryhub.settings.base",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        MEMORYHUB_DATA_DIR=str(tmp_path),
        MEMORYHUB_LLM_URL="http://127.0.0.1:9/v1",
        **env,
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", PRINT],
        cwd=ROOT, env=base, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])  # after the shell's own lines


@pytest.mark.parametrize(
    ("env", "temperature"),
    [
        ({}, None),
        ({"MEMORYHUB_LLM_TEMPERATURE": "0.3"}, 0.3),
        ({"MEMORYHUB_LLM_TEMPERATURE": " "}, None),
    ],
)
def test_the_temperature_is_the_servers_default_unless_set(tmp_path, env, temperature):
    config = _llm_config(tmp_path, **env)

    assert config["TEMPERATURE"] == temperature
    assert (config["MAX_TOKENS"], config["STRUCTURED"]) == (1024, "auto")
