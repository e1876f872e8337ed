"""Throughput of the offline token counter on 1,000 messages of 200 characters; not a test.

Run from the repository root: `.venv/bin/python tests/providers/bench_tokens.py`.
"""

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def messages(count: int = 1000, length: int = 200) -> list[str]:
    """Deterministic chat-like messages built from the parity sentences."""
    from tests.providers.fp32_parity import sentences

    rng = random.Random(4)
    pool = [s for s in sentences() if 0 < len(s) < length]
    out = []
    for _ in range(count):
        text = ""
        while len(text) < length:
            text += rng.choice(pool) + " "
        out.append(text[:length])
    return out


def main() -> None:
    from apps.providers.token_counts import count_tokens, count_tokens_batch

    texts = messages()
    count_tokens("warm up")  # loads the tokenizer
    started = time.perf_counter()
    single = [count_tokens(t) for t in texts]
    loop_s = time.perf_counter() - started
    started = time.perf_counter()
    batch = count_tokens_batch(texts)
    batch_s = time.perf_counter() - started
    assert single == batch
    tokens = sum(batch)
    print(f"{len(texts)} messages of {len(texts[0])} chars, {tokens} tokens")
    for label, seconds in (("count_tokens loop", loop_s), ("count_tokens_batch", batch_s)):
        print(
            f"{label}: {seconds * 1000:.1f} ms, {tokens / seconds:,.0f} tokens/s, "
            f"{len(texts) / seconds:,.0f} messages/s"
        )


if __name__ == "__main__":
    main()
