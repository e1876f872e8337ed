"""contains_search through its trigram index: the rows of a plain substring match, exactly.

The oracle is Python: a substring test after folding case per character, as each backend's
`icontains` does (SQLite's LIKE folds ASCII only; PostgreSQL compares UPPER(), which folds
whatever the database's LC_CTYPE knows).
"""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.test.utils import CaptureQueriesContext

from apps.conversations.models import Message
from apps.search.backends import sqlite
from apps.search.backends.base import trigram_index
from apps.search.corpora import get_corpus
from apps.search.legs import contains_search
from apps.search.operations import AddContainsIndex
from apps.search.services import search_indexes_rebuild
from tests.factories import MessageFactory, SessionFactory

TRGM = trigram_index("conversations_message", "content")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ORDER = ("-created_at", "-id")
DAY = timedelta(days=1)

TRICKY = [
    "100% sure", "100 percent sure", "a_b and axb", "a%b", "C:\\temp\\new", "C:/temp/new",
    "back\\\\slash", "it's \"quoted\" text", "O'Brien said hi", "Café au lait", "CAFÉ AU LAIT",
    "café", "Straße", "STRASSE", "İstanbul", "ıstanbul", "istanbul", "ΣΊΣΥΦΟΣ σίσυφος",  # noqa: RUF001
    "日本語のテキスト", "emoji 🙂 here", "aaaaa", "abababab", "ab", "a", "", "  spaced  out  ",
    "Deploy the sandbox", "deploy THE SANDBOX tonight", "sand box", "the sandbox runs nightly",
    "tab\there", "line\nbreak", "percent %% twice", "under__score",
]  # fmt: skip
QUERIES = [
    "%", "_", "\\", "%b", "a_b", "_b", "\\t", "C:\\", "\\\\", "'", '"', "'s \"", "0% s",
    "a", "ab", "aa", "aaa", "aaaa", "abab", "bab", "sandbox", "SANDBOX", "SandBox", "the s",
    "café", "CAFÉ", "Café", "é", "straße", "STRASSE", "ss", "istanbul", "İst", "ıst", "Ist",  # noqa: RUF001
    "σίσυφος", "ΣΊΣΥΦΟΣ", "日本", "日本語の", "🙂", "🙂 h", " ", "  ", "t\th", "e\nb", "%%",
    "__", "nothing like this", "deploy the sandbox tonight", "spaced  out",
]  # fmt: skip


def _ascii_fold(text: str) -> str:
    return "".join(ch.upper() if ch.isascii() else ch for ch in text)


def _unicode_fold(text: str) -> str:
    # UPPER() maps one character to one (towupper): "ß" stays "ß", unlike Python's "SS".
    return "".join(ch.upper() if len(ch.upper()) == 1 else ch for ch in text)


def _db_upper(text: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT UPPER(%s)", [text])
        return cursor.fetchone()[0]


def _fold():
    """The backend's case folding as a Python function, checked on every character used."""
    if connection.vendor == "sqlite":
        fold = _ascii_fold
    else:
        fold = _unicode_fold if _db_upper("é") == "É" else _ascii_fold
        chars = sorted({ch for text in TRICKY + QUERIES for ch in text})
        assert [_db_upper(ch) for ch in chars] == [fold(ch) for ch in chars]
    return fold


def _oracle(rows: list[Message], text: str, fold) -> list:
    """Brute force: the rows containing `text` after folding, newest first."""
    hits = [m for m in rows if fold(text) in fold(m.content)]
    hits.sort(key=lambda m: (m.created_at, m.id), reverse=True)
    return [m.id for m in hits]


def _contains(agent, text, limit=100, queryset=None) -> list:
    hits = contains_search(
        "messages", agent_id=agent.pk, text=text, limit=limit, queryset=queryset, order_by=ORDER
    )
    assert {h.leg for h in hits} <= {"contains"}
    assert {h.score for h in hits} <= {1.0}
    return [h.object_id for h in hits]


@pytest.fixture
def corpus(agent, other_agent):
    """Every tricky text twice in the agent (user and assistant), once in another agent."""
    mine, step = [], timedelta(minutes=1)
    session, theirs = SessionFactory(agent=agent), SessionFactory(agent=other_agent)
    for i, text in enumerate(TRICKY):
        for j, role in enumerate(("user", "assistant")):
            at = T0 + (2 * i + j) * step
            mine.append(MessageFactory(session=session, content=text, role=role, created_at=at))
        MessageFactory(session=theirs, content=text, created_at=T0 + i * step)
    return mine


@pytest.mark.django_db
@pytest.mark.parametrize("text", QUERIES)
def test_contains_equals_a_brute_force_substring_match(agent, corpus, text):
    fold = _fold()

    found = _contains(agent, text)

    assert found == _oracle(corpus, text, fold)


@pytest.mark.django_db
def test_restriction_ordering_and_limit_are_kept(agent, corpus):
    fold = _fold()
    assistant = Message.objects.filter(role="assistant")
    answers = [m for m in corpus if m.role == "assistant"]

    for text in ("sandbox", "a_b", "café", "aaa", "ab", "zzz"):
        assert _contains(agent, text, limit=3) == _oracle(corpus, text, fold)[:3]
        assert _contains(agent, text, queryset=assistant) == _oracle(answers, text, fold)


@pytest.mark.django_db
def test_another_agents_rows_are_never_found(agent, other_agent):
    MessageFactory(session=SessionFactory(agent=other_agent), content="the quokka protocol")

    assert _contains(agent, "quokka protocol") == []
    assert len(_contains(other_agent, "quokka protocol")) == 1


@pytest.mark.django_db
def test_other_contains_corpora_agree_with_the_oracle(agent, other_agent):
    # errors_search's substring leg runs on ErrorRecord.error through its own index
    from apps.learnings.models import ErrorRecord

    texts = ["Permission DENIED (publickey)", "permission denied", "50% done_", "timeout"]

    def record(owner, text, key):
        return ErrorRecord.objects.create(
            agent=owner, tool_name="git", error=text, normalized=key, expires_at=T0 + DAY
        )

    rows = [record(agent, t, str(i)) for i, t in enumerate(texts)]
    record(other_agent, texts[0], "x")

    for text, expected in (("denied", [1, 0]), ("0% d", [2]), ("e_", [2]), ("ssion D", [1, 0])):
        hits = contains_search(
            "errors", agent_id=agent.pk, text=text, limit=10, field="error", order_by=("-id",)
        )
        assert [h.object_id for h in hits] == [rows[i].pk for i in expected]


# --- the index is there and used --------------------------------------------------------


@pytest.mark.sqlite
@pytest.mark.django_db
def test_sqlite_triggers_keep_the_trigram_table_in_sync(agent, session):
    def candidates(text):
        return sqlite.contains_candidates(get_corpus("messages"), "content", text)

    def rowid(message):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT rowid FROM conversations_message WHERE id = %s", [message.id.hex]
            )
            return cursor.fetchone()[0]

    def integrity_check():  # FTS5 raises if the index differs from the table
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {TRGM}({TRGM}, rank) VALUES ('integrity-check', 1)")

    # insert
    message = MessageFactory(session=session, content="the Quokka protocol")
    assert candidates("quokka") == [rowid(message)]
    integrity_check()

    # update
    Message.objects.filter(pk=message.pk).update(content="the wombat protocol")
    assert candidates("quokka") == []
    assert candidates("WOMBAT") == [rowid(message)]
    integrity_check()

    # delete
    Message.objects.filter(pk=message.pk).delete()
    assert candidates("wombat") == []
    integrity_check()


@pytest.mark.sqlite
@pytest.mark.django_db
def test_sqlite_rechecks_the_trigram_tables_candidates(agent, session):
    message = MessageFactory(session=session, content="the quokka protocol")

    with CaptureQueriesContext(connection) as queries:
        assert _contains(agent, "QUOKKA") == [message.pk]

    sqls = [q["sql"] for q in queries.captured_queries]
    assert sum(f"FROM {TRGM} WHERE {TRGM} MATCH" in sql for sql in sqls) == 1
    (final,) = [sql for sql in sqls if "LIKE" in sql]
    assert ".rowid IN (SELECT value FROM json_each(" in final


@pytest.mark.sqlite
@pytest.mark.django_db
def test_sqlite_scans_when_the_index_cannot_narrow(agent, session):
    corpus = get_corpus("messages")
    batch = MessageFactory.build_batch(sqlite.MAX_CANDIDATES + 1, session=session, content="common")
    Message.objects.bulk_create(batch)

    assert sqlite.contains_candidates(corpus, "content", "co") is None  # under 3 characters
    assert sqlite.contains_candidates(corpus, "content", "common") is None  # too many
    assert sqlite.contains_candidates(corpus, "content", "uncommon") == []
    assert len(_contains(agent, "common", limit=5)) == 5


@pytest.mark.sqlite
@pytest.mark.django_db
def test_sqlite_probes_and_every_trigram_but_quote_fts_syntax():
    assert sqlite.trigram_probes("ab") == []
    assert sqlite.trigram_probes('a"b') == ['"a""b"']
    # rarest-looking first (z and x are rare letters; trigrams with whitespace last, in
    # code point order); the 3 first, then up to 12
    assert sqlite.trigram_probes("zax or") == [
        '"zax" AND " or" AND "ax "',
        '"zax" AND " or" AND "ax " AND "x o"',
    ]


@pytest.mark.sqlite
@pytest.mark.django_db
def test_search_rebuild_restores_the_trigram_table(agent, session):
    message = MessageFactory(session=session, content="the quokka protocol")
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {TRGM}({TRGM}) VALUES ('delete-all')")
    assert _contains(agent, "quokka") == []  # a stale index (e.g. after VACUUM) finds nothing

    search_indexes_rebuild()

    assert _contains(agent, "quokka") == [message.pk]


# --- the migration --------------------------------------------------------------------------


def _index_exists() -> bool:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE name LIKE %s", [f"{TRGM}%"])
            # the FTS5 table, its 3 shadow tables (no docsize: columnsize=0) and 3 triggers
            return len(cursor.fetchall()) == 7
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [TRGM])
        return cursor.fetchone() is not None


@pytest.mark.django_db(transaction=True)
def test_the_migration_drops_and_rebuilds_the_index(agent, session):
    message = MessageFactory(session=session, content="the quokka protocol")
    loader = MigrationLoader(connection)
    before = loader.project_state(("conversations", "0003_message_is_error"))
    after = loader.project_state(("conversations", "0004_trgm_contains_index"))
    operation = AddContainsIndex("message", field="content")
    assert _index_exists()

    with connection.schema_editor() as editor:
        operation.database_backwards("conversations", editor, after, before)
    assert not _index_exists()
    assert _contains(agent, "quokka") == [message.pk]  # the plain scan still answers

    with connection.schema_editor() as editor:
        operation.database_forwards("conversations", editor, before, after)
    assert _index_exists()
    assert _contains(agent, "quokka") == [message.pk]  # existing rows were indexed


def test_the_operation_deconstructs_for_makemigrations():
    operation = AddContainsIndex("message", field="content", vendors=("sqlite",))

    assert operation.deconstruct() == (
        "AddContainsIndex",
        ["message"],
        {"field": "content", "vendors": ("sqlite",)},
    )
    assert operation.describe() == "Create contains (trigram) index on message.content"


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize(("head_rows", "scan_rows"), [(4, 8), (4, 10_000), (10_000, 10_000)])
def test_every_postgres_path_equals_the_oracle(agent, corpus, head_rows, scan_rows):
    # (4, 8): the head, then the index or a longer head, then the index; (4, 10_000): the
    # head, then the index or a longer head; (10_000, ...): the head reads everything.
    from apps.search.backends.postgres import contains

    fold = _fold()
    for text in QUERIES:
        hits = contains.contains(
            get_corpus("messages"),
            agent_id=agent.pk,
            text=text,
            field="content",
            limit=5,
            order_by=ORDER,
            head_rows=head_rows,
            scan_rows=scan_rows,
        )
        assert [h.object_id for h in hits] == _oracle(corpus, text, fold)[:5], text


def _explain(sql: str, params=None) -> str:
    """The plan with sequential scans off, as contains' index path runs it."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgres_reads_rare_trigrams_from_the_index(agent, session):
    from apps.search.backends.postgres import contains

    Message.objects.bulk_create(MessageFactory.build_batch(300, session=session))
    rare = MessageFactory(session=session, content="the quokka protocol", created_at=T0)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE conversations_message")

    with CaptureQueriesContext(connection) as queries:
        hits = contains.contains(
            get_corpus("messages"), agent_id=agent.pk, text="Quokka proto", field="content",
            limit=3, order_by=ORDER, head_rows=2,
        )  # fmt: skip

    assert [h.object_id for h in hits] == [rare.pk]
    sql = next(q["sql"] for q in queries.captured_queries if "IS TRUE" in q["sql"])
    # the 6 rarest-looking of its 7 letter trigrams are the index's conditions (not "OTO"),
    # the text itself a filter the index cannot take; no agent filter competes with them
    assert sql.count("LIKE UPPER('%") == 7
    for probe in ("QUO", "OKK", "KKA", "UOK", "PRO", "ROT"):
        assert f"::text) LIKE UPPER('%{probe}%')" in sql
    assert "LIKE UPPER('%Quokka proto%')) IS TRUE" in sql
    assert "agent_id" not in sql
    with connection.cursor() as cursor:  # the planner setting was reset
        cursor.execute("SHOW enable_seqscan")
        assert cursor.fetchone()[0] == "on"
    plan = _explain(sql)
    assert f"Bitmap Index Scan on {TRGM}" in plan
    (cond,) = [line for line in plan.splitlines() if "Index Cond" in line]
    assert "'%QUO%'::text" in cond
    assert "PROTO" not in cond


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgres_index_is_on_the_expression_icontains_compares():
    # the fallback path (a text without 3 letters or digits in a row) is Django's own query
    qs = Message.objects.filter(content__icontains="%_日本").order_by()
    sql, params = qs.values_list("pk").query.sql_with_params()

    plan = _explain(sql, params)

    assert f"Bitmap Index Scan on {TRGM}" in plan
    assert "Index Cond: (upper(content) ~~ '%\\%\\_日本%'::text)" in plan
