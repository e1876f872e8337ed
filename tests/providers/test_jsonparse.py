"""parse_llm_json: seed 004's three tiers."""

from apps.providers.llm.jsonparse import parse_llm_json


def test_tier1_plain_json():
    assert parse_llm_json('{"history_entry": "a", "memory_update": "b"}') == {
        "history_entry": "a",
        "memory_update": "b",
    }


def test_tier1_fenced_json():
    text = '```json\n{"history_entry": "User moved", "memory_update": null}\n```'

    assert parse_llm_json(text) == {"history_entry": "User moved", "memory_update": None}


def test_tier1_fence_without_language_tag():
    assert parse_llm_json('```\n{"a": 1}\n```') == {"a": 1}


def test_tier1_raw_newlines_inside_strings_are_accepted():
    text = '{"history_entry": "line one\nline two"}'

    assert parse_llm_json(text) == {"history_entry": "line one\nline two"}


def test_tier2_prose_around_json():
    text = (
        "Sure! Here is the consolidation you asked for:\n"
        '{"history_entry": "[2026-02-27 14:30] Talked about cats", "memory_update": "Has a cat"}\n'
        "Let me know if you need anything else."
    )

    assert parse_llm_json(text) == {
        "history_entry": "[2026-02-27 14:30] Talked about cats",
        "memory_update": "Has a cat",
    }


def test_tier2_braces_and_escaped_quotes_inside_strings():
    text = (
        'Result: {"history_entry": "User wrote \\"{not a brace}\\" and }{", '
        '"memory_update": "Likes {curly} things"} -- done'
    )

    assert parse_llm_json(text) == {
        "history_entry": 'User wrote "{not a brace}" and }{',
        "memory_update": "Likes {curly} things",
    }


def test_tier2_skips_a_balanced_block_that_is_not_json():
    text = 'Template {user} filled:\n{"history_entry": "x", "memory_update": "y"}'

    assert parse_llm_json(text) == {"history_entry": "x", "memory_update": "y"}


def test_tier2_nested_objects_are_kept_whole():
    text = 'Answer: {"history_entry": "x", "meta": {"n": 2}} thanks'

    assert parse_llm_json(text) == {"history_entry": "x", "meta": {"n": 2}}


def test_tier3_truncated_json_yields_the_complete_fields():
    text = (
        '```json\n{"history_entry": "[2026-02-27 14:30] User adopted a cat named \\"Whisk\\".\\n'
        'Second line.", "memory_update": "The user has a cat named Whisk and lives in Ber'
    )

    assert parse_llm_json(text) == {
        "history_entry": '[2026-02-27 14:30] User adopted a cat named "Whisk".\nSecond line.'
    }


def test_tier3_invalid_json_with_both_fields():
    # Trailing comma and single-quoted key make the object invalid JSON.
    text = '{\'note\': 1, "history_entry": "h \\u00e9", "memory_update": "m",}'

    assert parse_llm_json(text) == {"history_entry": "h é", "memory_update": "m"}


def test_tier3_uses_the_requested_field_names():
    text = '{"summary": "short", "facts": ["a", "b"'

    assert parse_llm_json(text, fields=("summary",)) == {"summary": "short"}


def test_json_that_is_not_an_object_is_not_returned():
    assert parse_llm_json('["history_entry", "memory_update"]') is None


def test_garbage_returns_none():
    assert parse_llm_json("I'm sorry, I can't help with that.") is None
    assert parse_llm_json("{{{{ ]]] }") is None
    assert parse_llm_json("") is None
    assert parse_llm_json("   ") is None
