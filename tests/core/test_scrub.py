"""Issue 39: the scrubber (apps/core/scrub.py), table-driven: what it masks, what it leaves,
exactly. No database."""

import pytest

from apps.core.scrub import Scrubber, person_terms, scrub_text, scrub_value, usable_terms

MASKED = [
    # e-mail
    ("mail carol.jensen@example.com bounced", "mail [email] bounced"),
    ("to: a+b@mail.co.uk, cc", "to: [email], cc"),
    # IBANs: checksum verified, spaces allowed, a word after it is no part of it
    ("IBAN DK50 0040 0440 1162 43 refused", "IBAN [iban] refused"),
    ("IBAN DK5000400440116243 OK", "IBAN [iban] OK"),
    ("GB82 WEST 1234 5698 7654 32", "[iban]"),
    ("gb82west12345698765432", "[iban]"),
    # cards: Luhn verified; any other run of 13+ digits is a [number]
    ("card 4111 1111 1111 1111 declined", "card [card] declined"),
    ("card 4111-1111-1111-1111", "card [card]"),
    ("card 378282246310005", "card [card]"),
    ("card 4111-1111-1111-1112 declined", "card [number] declined"),
    # not an IBAN (its checksum fails), but its 14 digits pass Luhn: masked all the same
    ("IBAN DK50 0040 0440 1162 44 refused", "IBAN DK50 [card] refused"),
    ("order 1234567890123 missing", "order [number] missing"),
    # phones
    ("call +45 12 34 56 78 failed", "call [phone] failed"),
    ("call +1 (555) 123-4567", "call [phone]"),
    ("call +4915112345678", "call [phone]"),
    ("call (555) 123-4567 or 555-123-4567", "call [phone] or [phone]"),
    ("call 030 1234 5678 now", "call [phone] now"),
    ("call 06 12 34 56 78 now", "call [phone] now"),
    ("call 0612345678", "call [phone]"),
    # IP addresses
    ("host 10.0.0.5:8080 refused", "host [ip]:8080 refused"),
    ("from 192.168.1.254", "from [ip]"),
    ("ipv6 2001:db8::1 down", "ipv6 [ip] down"),
    ("via fe80::1", "via [ip]"),
    ("at 2001:0db8:85a3:0000:0000:8a2e:0370:7334", "at [ip]"),
    # URLs with credentials: scheme and host kept
    (
        "postgres://bob:s3cret@db.example.com:5432/app",
        "postgres://[credentials]@db.example.com:5432/app",
    ),
    ("https://token@example.com/x", "https://[credentials]@example.com/x"),
    # keys and tokens
    ("key sk-proj-abcdefghijklmnop1234 bad", "key [token] bad"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[token]"),
    ("github_pat_11ABCDEFG0123456789_abcdefghij", "[token]"),
    ("xoxb-1234567890-abcdefghij", "[token]"),
    ("AKIAIOSFODNN7EXAMPLE", "[token]"),
    ("Authorization: Bearer abc.def-ghi_jkl123", "Authorization: Bearer [token]"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "jwt [token]",
    ),
    ("sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "sha [token]"),
    ("secret Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MEFCQ0RFRg==", "secret [token]"),
    ("mh_deadbeef_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab", "[token]"),
]

LEFT = [
    "book_ticket failed: quota exceeded",
    "HTTP 429: Too Many Requests, retry after 30s (line 12)",
    "on 2026-03-02T08:00:00Z at 12:30:45",
    "due 2026-03-02, 01-02-2026 12 and 01.02.2026",
    "v1.2.3 and 10.4.1-beta",
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "book_ticket_for_a_very_long_customer_name_here",
    "std::vector and a::b and ::1",
    "exit code 137, pid 4242, port 5432",
    "https://api.example.com/v1/charges?limit=10",
    "key bruno-personal quota exceeded",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGH",  # 34 letters: no digits, no lower case
    "IBAN DE00 1234 refused",  # too short for an IBAN
]


@pytest.mark.parametrize(("text", "expected"), MASKED)
def test_masks(text, expected):
    assert scrub_text(text) == expected


@pytest.mark.parametrize("text", LEFT)
def test_leaves(text):
    assert scrub_text(text) == text


def test_terms_are_matched_case_insensitively_on_word_boundaries_longest_first():
    terms = ["Carol Jensen", "Jensen", "Lisbon", "al", "the"]

    assert scrub_text("Carol  Jensen, jensen; LISBON: Lisbonne, al the", terms=terms) == (
        "[name], [name]; [name]: Lisbonne, al the"
    )


def test_the_users_identifier_is_user_and_their_fact_values_names():
    terms = person_terms(user="carol", values=["Carol Jensen", "lives in Lisbon", "42"])

    assert terms == ["lives in Lisbon", "Carol Jensen", "Jensen", "Lisbon", "carol"]
    assert scrub_text("Jensen, Carol (carol) lives in Lisbon; carolina", terms=terms,
                      user="carol") == "[name], [user] ([user]) [name]; carolina"  # fmt: skip


def test_usable_terms_drop_short_ones_stopwords_placeholders_and_repeats():
    assert usable_terms(["ab", " The ", "email", "Ana", "ana", "x" * 201, " Rua  Augusta "]) == [
        "Rua Augusta",
        "Ana",
    ]


def test_a_json_value_is_scrubbed_throughout_keys_and_shape_kept():
    value = {
        "iban": "DK50 0040 0440 1162 43",
        "card": 4111111111111111,
        "count": 3,
        "ok": True,
        "to": ["carol@example.com", None, 1.5],
        "nested": {"who": "Carol Jensen"},
    }

    assert scrub_value(value, terms=["Carol Jensen"]) == {
        "iban": "[iban]",
        "card": "[card]",
        "count": 3,
        "ok": True,
        "to": ["[email]", None, 1.5],
        "nested": {"who": "[name]"},
    }


def test_it_is_deterministic_and_idempotent():
    text = "refused for Carol Jensen, IBAN DK50 0040 0440 1162 43, carol@example.com, 10.0.0.5"
    once = Scrubber(user="carol", terms=("Carol Jensen",)).text(text)

    assert once == "refused for [name], IBAN [iban], [email], [ip]"
    assert Scrubber(user="carol", terms=("Carol Jensen",)).text(once) == once
    assert scrub_text("") == ""


@pytest.mark.parametrize(
    ("text", "user", "terms", "shown"),
    [
        # only the user's id is known ("bruno"): the capitalised word after it is the rest of
        # their name (a real walk: "Ferreira" reached another user)
        (
            "payment refused for Bruno Ferreira, IBAN",
            "bruno",
            (),
            "payment refused for [name], IBAN",
        ),
        # a first name from their facts, with a middle name and a surname around it
        ("Dear Carol Ann Jensen, hello", "", ("Carol",), "[name], hello"),
        # an identifier is no word: the capitalised words beside it stay
        ("refused for telegram:42 Today", "telegram:42", (), "refused for [user] Today"),
        # all capitals and lower case are no part of a name
        ("Carol IBAN refused, carol wrote", "", ("Carol",), "[name] IBAN refused, [name] wrote"),
    ],
)
def test_a_known_name_takes_the_capitalised_words_beside_it(text, user, terms, shown):
    assert scrub_text(text, terms=terms, user=user) == shown
