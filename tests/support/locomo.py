"""LoCoMo dev conversations (../shared/bench/locomo, beside the clone) as API messages."""

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

# MEMORYHUB_LOCOMO_DEV names the file when the clone does not sit beside ../shared (.ci/run
# sets it for a clone made elsewhere).
LOCOMO_DEV = Path(
    os.environ.get("MEMORYHUB_LOCOMO_DEV")
    or Path(__file__).resolve().parents[3] / "shared/bench/locomo/locomo-dev.json"
)


def locomo_messages(sample_id: str, sessions: int, path: Path = LOCOMO_DEV) -> list[dict]:
    """The first `sessions` sessions of `sample_id` as append bodies, a minute apart from each
    session's own date: speaker A is the user, B the assistant."""
    sample = next(s for s in json.loads(path.read_text()) if s["sample_id"] == sample_id)
    conv = sample["conversation"]
    out = []
    for number in range(1, sessions + 1):
        start = datetime.strptime(conv[f"session_{number}_date_time"], "%I:%M %p on %d %B, %Y")
        for i, turn in enumerate(conv[f"session_{number}"]):
            out.append(
                {
                    "role": "user" if turn["speaker"] == conv["speaker_a"] else "assistant",
                    "name": turn["speaker"],
                    "content": turn["text"],
                    "created_at": (start.replace(tzinfo=UTC) + timedelta(minutes=i)).isoformat(),
                    "metadata": {"dia_id": turn["dia_id"]},
                    "idempotency_key": turn["dia_id"],
                }
            )
    return out
