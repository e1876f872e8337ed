"""Offline token counting with the vendored all-MiniLM-L6-v2 WordPiece tokenizer."""

from apps.providers.token_counts import count_tokens, count_tokens_batch


def test_exact_counts_for_fixed_strings():
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("The quick brown fox jumps over the lazy dog.") == 10
    assert count_tokens("unbelievably tokenization") == 7
    assert count_tokens("My cat is called Whiskerino") == 8


def test_empty_string_is_zero():
    assert count_tokens("") == 0
    assert count_tokens_batch(["", ""]) == [0, 0]
    assert count_tokens_batch([]) == []


def test_unicode_and_emoji():
    # naive, cafe (accents stripped), [UNK] for the emoji, 東, 京
    assert count_tokens("naïve café 🐱 東京") == 5
    assert count_tokens("🎉🎉🎉") == 1


def test_long_text_is_not_truncated():
    assert count_tokens("memory " * 1000) == 1000


def test_batch_matches_single_counts():
    texts = ["Hello, world!", "", "naïve café 🐱 東京", "memory " * 300]

    assert count_tokens_batch(texts) == [4, 0, 5, 300]
