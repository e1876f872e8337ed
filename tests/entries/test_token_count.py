"""Entries carry the token count of their content, kept by every write (get_context reads it)."""

import importlib

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import User

from apps.entries.models import Entry
from apps.entries.selectors import workspace_export
from apps.entries.services import entry_add, entry_append, entry_write, workspace_import
from apps.providers.token_counts import count_tokens
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


def stored(entry_id: int) -> int | None:
    return Entry.objects.values_list("token_count", flat=True).get(pk=entry_id)


def test_add_and_write_store_the_count_of_the_content(agent):
    added = entry_add(agent=agent, name="SOUL.md", content="Be kind. Be brief.")
    assert stored(added.pk) == count_tokens("Be kind. Be brief.") == 6

    entry_write(agent=agent, ref="SOUL.md", content="Tokenisation isn't free")
    assert stored(added.pk) == count_tokens("Tokenisation isn't free") == 6

    entry_write(agent=agent, ref="SOUL.md", content="")
    assert stored(added.pk) == 0


@pytest.mark.parametrize(
    ("header", "lines"),
    [
        ("# 2026-01-31\n\n", ["- 09:00 saved one\n", "- 09:01 saved two, again\n"]),
        # no whitespace at the joins: "pre" + "fix" + "ation" are re-read as one word
        ("pre", ["fix", "ation"]),
        ("", ["unbroken", " then spaced"]),
    ],
)
def test_append_keeps_the_count_equal_to_counting_the_whole(agent, header, lines):
    for line in lines:
        entry = entry_append(agent=agent, name="memory/2026-01-31.md", text=line, header=header)

    content = header + "".join(lines)
    assert Entry.objects.get(pk=entry.pk).content == content
    assert stored(entry.pk) == count_tokens(content)


def test_append_to_a_row_never_counted_counts_the_whole(agent):
    entry = entry_add(agent=agent, name="notes.md", content="first line\n")
    Entry.objects.filter(pk=entry.pk).update(token_count=None)

    entry_append(agent=agent, name="notes.md", text="second line\n")

    assert stored(entry.pk) == count_tokens("first line\nsecond line\n") == 4


def test_import_stores_counts_for_created_and_overwritten_entries(agent):
    source = AgentFactory(slug="source-bot")
    entry_add(agent=source, name="SOUL.md", content="Be kind.")
    entry_add(agent=source, name="memory/2026-01-31.md", content="# 2026-01-31\n\n- tea\n")
    entry_add(agent=agent, name="SOUL.md", content="old words that will be replaced")

    workspace_import(agent=agent, data=workspace_export(agent=source), force=True)

    assert dict(Entry.objects.filter(agent=agent).values_list("name", "token_count")) == {
        "SOUL.md": count_tokens("Be kind."),
        "memory/2026-01-31.md": count_tokens("# 2026-01-31\n\n- tea\n"),
    }


def test_an_admin_content_edit_recounts(client, agent):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    entry = entry_add(agent=agent, name="USER.md", content="Ann")

    response = client.post(
        f"/admin/entries/entry/{entry.pk}/change/",
        {"content": "Ann lives in Lisbon and likes tea",
         "aliases-TOTAL_FORMS": "0", "aliases-INITIAL_FORMS": "0",
         "aliases-MIN_NUM_FORMS": "0", "aliases-MAX_NUM_FORMS": "1000"},
    )  # fmt: skip

    assert response.status_code == 302
    assert stored(entry.pk) == count_tokens("Ann lives in Lisbon and likes tea") == 7


def test_migration_backfills_rows_written_before_the_field(agent):
    a = entry_add(agent=agent, name="SOUL.md", content="Be kind. Be brief.")
    b = entry_add(agent=agent, name="USER.md", content="")
    Entry.objects.update(token_count=None)
    migration = importlib.import_module("apps.entries.migrations.0003_entry_token_count")

    migration.backfill(django_apps, None)

    assert (stored(a.pk), stored(b.pk)) == (6, 0)
