"""manage.py move_to_postgres: a store with every kind of row moves into a new PostgreSQL
database row for row, search answers the same there, and a re-run continues an interrupted
move without duplicating anything. Runs on both backends: from the SQLite test database, and
from the PostgreSQL test database into a second PostgreSQL database."""

import json
import math
import os
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta, timezone
from io import StringIO

import numpy as np
import psycopg
import pytest
from django.conf import settings
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections
from django.test import Client
from django_celery_beat.models import (
    ClockedSchedule,
    CrontabSchedule,
    IntervalSchedule,
    PeriodicTask,
    SolarSchedule,
)

from apps.agents.models import Agent
from apps.agents.services import agent_update_settings, audit_record, user_create
from apps.conversations.models import Message, MessageTokens
from apps.conversations.services import NewMessage, messages_append
from apps.core.services.store_move.plan import copy_plan
from apps.core.services.store_move.rows import Checksum
from apps.core.services.store_move.target import ALIAS, close_alias, open_alias, target_config
from apps.entries.services import entry_alias
from apps.facts.models import Fact
from apps.facts.services import fact_save, fact_supersede
from apps.lifecycle.services.leases import lease_acquire
from apps.search.bm25_check import bm25_checks
from tests.factories import AgentFactory, issue_key
from tests.lifecycle.helpers import faithful, use_llm
from tests.support.client import ApiClient
from tests.support.llm_server import Reply

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
CHAT = [
    ("Caroline", "user", "My cat is called Whiskerino and she sleeps on the piano."),
    ("", "assistant", "Whiskerino is a lovely name for a cat."),
    ("", "user", "I went to my support group on Tuesday evening."),
    ("", "assistant", "How did the support group go?"),
    ("Caroline", "user", "It went well; we talked about painting and pottery."),
    ("", "assistant", "Painting sounds relaxing. Do you paint landscapes?"),
    ("Caroline", "user", "Mostly sunsets over the lake near my house."),
    ("", "assistant", "Sunsets over a lake must be beautiful to paint."),
]
# 12 more, each on its own subject (near-identical texts would tie on vector scores, which
# the two vector engines break differently in the last float32 bit): 20 messages, 4 of which
# leave the 16-message window (summary, flush).
CHAT += [
    ("", "user" if i % 2 == 0 else "assistant", text)
    for i, text in enumerate(
        [
            "The train to Lisbon leaves at seven.",
            "Remember to water the basil twice a week.",
            "My brother fixed the bicycle chain yesterday.",
            "Quarterly taxes are due in April.",
            "The violin concert was sold out.",
            "We should repaint the fence before winter.",
            "Mushroom risotto needs patience and stock.",
            "The dentist moved the appointment to Friday.",
            "Chess club meets in the library basement.",
            "Snow is forecast for the mountain pass.",
            "The printer is out of magenta ink.",
            "Grandma turns ninety in June.",
        ]
    )
]


def _server() -> dict:
    """The PostgreSQL server the target is created on: the test database's, or local."""
    default = settings.DATABASES["default"]
    if default["ENGINE"] == "django.db.backends.postgresql":
        return {k: default[k] for k in ("HOST", "PORT", "USER", "PASSWORD")}
    return {"HOST": "127.0.0.1", "PORT": 5432, "USER": "postgres", "PASSWORD": ""}


def _admin(sql: str) -> None:
    s = _server()
    dsn = f"host={s['HOST']} port={s['PORT'] or 5432} user={s['USER']} dbname=postgres"
    with psycopg.connect(dsn, password=s["PASSWORD"] or None, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture
def target_url():
    """A database name nobody uses, on the PostgreSQL server; the command creates it."""
    name = f"memoryhub_move_t{uuid.uuid4().hex[:10]}"
    s = _server()
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    yield f"postgres://{auth}@{s['HOST']}:{s['PORT'] or 5432}/{name}"
    close_alias(ALIAS)  # a failed test may leave it open
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def target(target_url):
    """Open the target as a connection alias after the command ran (for reading it)."""
    yield lambda: open_alias("moved", target_config(target_url))
    close_alias("moved")


def _django_rows(user, agent) -> None:
    """Django's and django-celery-beat's own tables, which no memoryhub service writes."""
    group = Group.objects.create(name="reviewers")
    group.permissions.add(Permission.objects.get(codename="view_agent"))
    user.groups.add(group)
    user.user_permissions.add(Permission.objects.get(codename="change_agent"))
    LogEntry.objects.create(
        user=user,
        content_type=ContentType.objects.get_for_model(Agent),
        object_id=str(agent.pk),
        object_repr=str(agent),
        action_flag=ADDITION,
        change_message="[]",
    )
    every = IntervalSchedule.objects.create(every=5, period=IntervalSchedule.MINUTES)
    CrontabSchedule.objects.create(minute="7", hour="3")
    SolarSchedule.objects.create(event="sunset", latitude=51.5, longitude=-0.12)
    clocked = ClockedSchedule.objects.create(clocked_time=T0)
    PeriodicTask.objects.create(name="sweep", task="search.embed_pending", interval=every)
    PeriodicTask.objects.create(
        name="once", task="core.optimize_database", clocked=clocked, one_off=True
    )


def _ok(response, status=200):
    assert response.status_code == status, response.content[:300]
    return response.json() if response.content else None


def build_store(django_capture_on_commit_callbacks, settings, llm_server):
    """Every kind of row: users, teams, memberships, agents, keys, settings, sessions with
    meta, summaries, markers and messages with vectors, facts with versions and a supersede
    chain, categories, entries with aliases and change logs, error records with a user's raw
    text, learnings, runs
    with their facts, history, leases, audit events and the Django and beat tables."""
    use_llm(settings, llm_server)  # summary, flush facts and history from a model's answers
    llm_server.script(Reply(faithful, repeat=True))
    with django_capture_on_commit_callbacks(execute=True):
        agent = AgentFactory(slug="caroline-bot")
        key = issue_key(agent)
        api = ApiClient(key=key, client=Client())
        other = AgentFactory(slug="mallory-bot")  # another team: no messages (see search)
        issue_key(other)
        agent_update_settings(agent=agent, changes={"search_context_before": 1})
        user = user_create(username="vera", team_name=agent.team.name, role="editor").user
        audit_record(
            user=user,
            agent=agent,
            source="review",
            action="edit",
            target=agent,
            before={"name": "x"},
            after={"name": agent.name},
        )
        _ok(api.post("/sessions", {"key": "chat-1", "title": "Cats"}), 201)
        messages = [
            {
                "role": r,
                "name": n,
                "content": c,
                "created_at": (T0 + timedelta(minutes=i)).isoformat(),
            }
            for i, (n, r, c) in enumerate(CHAT)
        ]
        _ok(api.post("/sessions/chat-1/messages", {"messages": messages}), 201)
        _ok(api.post("/sessions/chat-1/summarize"))
        _ok(api.post("/sessions/chat-1/flush"))
        _ok(api.post("/sessions/chat-1/compact"))
        _ok(api.post("/sessions/chat-1/consolidate"))
        saved = _ok(
            api.post(
                "/memory/save",
                {
                    "content": "The cat is called Whiskerino",
                    "category": "pets",
                    "session_id": "chat-1",
                },
            )
        )
        fid = saved["fact"]["id"]
        _ok(
            api.patch(
                f"/facts/{fid}", {"value": "The cat is called Whiskerino II", "reason": "renamed"}
            )
        )
        _ok(api.post(f"/facts/{fid}/supersede", {"value": "The cat is Whiskerino III"}), 201)
        _ok(api.post("/entries", {"name": "notes/cats.md", "content": "Cats: Whiskerino"}), 201)
        entry_alias(agent=agent, ref="notes/cats.md", alias="cats")
        error = _ok(
            api.post(
                "/errors",
                {
                    "tool_name": "git_push",
                    "error": "rejected: non-fast-forward",
                    "strategy": "pull --rebase",
                    "outcome": "resolved",
                    "resolution": "pull --rebase then push",
                    "session_id": "chat-1",
                },
            ),
            201,
        )
        _ok(api.post(f"/errors/{error['id']}/promote"), 201)
        # an end user's failure: shared de-identified, their raw text kept apart (ErrorDetail)
        failed = {"tool_name": "send_sms", "error": "no route to +45 20 12 34 56"}
        _ok(api.post("/errors", {**failed, "user": "telegram:9"}), 201)
        _ok(api.post("/learnings", {"kind": "correction", "content": "Say Whiskerino"}), 201)
        lease_acquire(name="held-by-a-worker", ttl=60)
        _django_rows(user, agent)
    client = Client()
    client.force_login(user)  # a browser login: a django_session row
    return agent, key, api


# Queries whose vector scores have no ties over the 20 messages: the two engines order equal
# cosines differently (exact ties, e.g. two orthogonal vectors, are not a property of a move).
SEARCHES = [
    {"query": "whiskerino piano", "mode": "keyword", "k": 10},
    {"query": "What did Caroline say about her cat?", "mode": "hybrid", "k": 10},
    {
        "query": "painting and pottery at the support group",
        "mode": "hybrid",
        "k": 5,
        "session_id": "chat-1",
    },
    {"query": "sunsets over the lake", "mode": "semantic", "k": 5},
    {"query": "the", "mode": "contains", "k": 20},
    {"query": "Where did Caroline paint sunsets?", "mode": "semantic", "k": 20},
]

# Runs in a child process whose default database is the target: the service as a user would
# run it after moving, with the same API key.
AFTER = r"""
import json, sys
import django
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()
from django.test import Client
key, calls = json.load(sys.stdin)
client, out = Client(), []
for path, body in calls:
    r = client.post("/api/v1" + path, json.dumps(body), content_type="application/json",
                    headers={"Authorization": "Bearer " + key})
    out.append([r.status_code, r.json()])
print(json.dumps(out))
"""


def _as_user_after_move(url: str, key: str, calls: list) -> list:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "CACHE_URL": "locmemcache://",
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings.test",
    }
    done = subprocess.run(
        [sys.executable, "-c", AFTER],
        input=json.dumps([key, calls]),
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _same(a, b, where="") -> list[str]:
    """Differences between two JSON values; floats equal to 1e-6 (cosines are float32)."""
    if isinstance(a, float) or isinstance(b, float):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float))
        same = ok and abs(a - b) <= 1e-6
        return [] if same else [f"{where}: {a} != {b}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in _same(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in _same(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def _plain(value):
    if isinstance(value, memoryview):  # a bytea column on PostgreSQL
        return bytes(value)
    return tuple(value.tolist()) if isinstance(value, np.ndarray) else value


def _table(alias: str, model) -> list[tuple]:
    """Every row of a model's table as plain Python values, in a backend-independent order."""
    rows = model._base_manager.using(alias).values_list(
        *[f.attname for f in model._meta.concrete_fields]
    )
    return sorted((tuple(_plain(v) for v in row) for row in rows), key=repr)


def _vector_indexes(alias: str, table: str = "conversations_message") -> list[str]:
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexdef LIKE %s",
            [table, "% USING hnsw %"],
        )
        return [name for (name,) in cursor.fetchall()]


def _move(url: str, *args: str) -> str:
    out = StringIO()
    call_command("move_to_postgres", url, "--no-vacuum", *args, stdout=out)
    return out.getvalue()


def _line(output: str, label: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(label + " "))


def test_every_row_moves_and_search_answers_the_same(
    django_capture_on_commit_callbacks, settings, llm_server, target_url, target
):
    # given a store with a row in every table, and its search answers
    _, key, api = build_store(django_capture_on_commit_callbacks, settings, llm_server)
    plans = copy_plan()
    counts = {p.label: p.model._base_manager.count() for p in plans}
    assert [label for label, n in counts.items() if n == 0] == []
    before = [[r.status_code, r.json()] for r in (api.post("/search", b) for b in SEARCHES)]
    assert [len(b[1]["hits"]) for b in before] == [2, 10, 5, 5, 12, 20]
    assert all("rerank" in h["legs"] for h in before[1][1]["hits"])  # hybrid is reranked
    cosines = [h["score"] for h in before[-1][1]["hits"]]
    assert len(set(cosines)) == 20  # no ties (see SEARCHES)

    # when it moves, in chunks of 7 rows, and the same command runs again
    first = _move(target_url, "--chunk-size", "7")
    again = _move(target_url, "--chunk-size", "7")

    # then every table was copied once, row for row, and verified
    for label, n in counts.items():
        copied = rf"{re.escape(label)} +{n:,} rows +{n:,} copied +0 already there"
        assert re.fullmatch(copied + r"  checksum [0-9a-f]{16} OK", _line(first, label))
        assert f"{n:,} rows {0:>10,} copied {n:>10,} already there" in _line(again, label)
    assert f"moved {sum(counts.values()):,} rows (0 were already there)" in first
    assert f"moved 0 rows ({sum(counts.values()):,} were already there)" in again
    moved = target()
    for plan in plans:
        assert _table(moved, plan.model) == _table("default", plan.model), plan.label
    assert Message._base_manager.using(moved).filter(embedding__isnull=False).count() == 20
    # the token states came along (the searches below rerank with them)
    states = MessageTokens._base_manager.using(moved)
    assert states.filter(space="fake-hash/words32@int8").count() == 20
    assert _table(moved, MessageTokens) == _table("default", MessageTokens)
    assert _vector_indexes(moved) == ["conversations_message_embedding_hnsw"]  # rebuilt
    # BM25 statistics were built by the triggers from the copied rows: N and total length
    checks = {c.corpus: c for c in bm25_checks(using=moved)}
    assert (checks["messages"].documents, checks["messages"].agents) == (20, 1)
    assert all(c.ok for c in checks.values()), checks

    # and the service on the new database answers the same searches for the same key
    calls = [["/search", b] for b in SEARCHES] + [["/facts", {"value": "Likes green tea"}]]
    *after, (status, created) = _as_user_after_move(target_url, key, calls)
    assert _same(before, after) == []
    # and new rows get new ids: the sequences were moved past the copied ids
    assert (status, created["fact"]["id"]) == (201, Fact.objects.order_by("-pk").first().pk + 1)


def test_an_interrupted_move_continues_where_it_stopped(
    django_capture_on_commit_callbacks, session, target_url, target
):
    # given 23 messages and a fact superseded twice (a chain written in a second pass)
    with django_capture_on_commit_callbacks(execute=True):
        texts = [f"note {i}: the {w} report" for i, w in enumerate("abcdefghijklmnopqrstuvw")]
        messages_append(
            session=session,
            messages=[NewMessage(role="user", content=t, created_at=T0) for t in texts],
        )
        first = fact_save(agent=session.agent, content="Lives in Porto").fact
        second = fact_supersede(
            agent=session.agent, fact=first, value="Lives in Lisbon", changed_by="agent"
        )
        fact_supersede(agent=session.agent, fact=second, value="Lives in Braga", changed_by="agent")
    plans = copy_plan()
    labels = [p.label for p in plans]
    before = sum(
        math.ceil(p.model._base_manager.count() / 5)
        for p in plans[: labels.index("conversations.Message")]
    )

    # when the first run stops after two chunks of 5 messages (as a killed run would)
    with pytest.raises(CommandError, match="run the same command again") as stopped:
        _move(target_url, "--chunk-size", "5", "--max-chunks", str(before + 2))
    moved = target()
    assert stopped.value.returncode == 3
    assert Message._base_manager.using(moved).count() == 10
    assert Fact._base_manager.using(moved).count() == 0
    assert _vector_indexes(moved) == []  # built once the rows are in

    # then the next run copies the rest, nothing twice, and every table matches
    output = _move(target_url, "--chunk-size", "5")
    assert _line(output, "conversations.Message").split()[1:8] == [
        "23",
        "rows",
        "13",
        "copied",
        "10",
        "already",
        "there",
    ]
    for plan in plans:
        assert _table(moved, plan.model) == _table("default", plan.model), plan.label
    assert _vector_indexes(moved) == ["conversations_message_embedding_hnsw"]
    chain = dict(Fact._base_manager.using(moved).values_list("value", "superseded_by__value"))
    assert chain == {
        "Lives in Porto": "Lives in Lisbon",
        "Lives in Lisbon": "Lives in Braga",
        "Lives in Braga": None,
    }
    assert [(c.documents, c.ok) for c in bm25_checks(using=moved) if c.corpus == "messages"] == [
        (23, True)
    ]

    # and a run stopped between the two passes (chain not written yet) completes it
    Fact._base_manager.using(moved).update(superseded_by=None)
    output = _move(target_url, "--chunk-size", "5")
    assert "facts.Fact " in output
    assert _line(output, "facts.Fact").endswith(" OK")
    assert (
        dict(Fact._base_manager.using(moved).values_list("value", "superseded_by__value")) == chain
    )


def test_a_target_holding_other_data_is_refused_before_anything_is_written(
    agent, target_url, target
):
    # given a target that holds this store as it was, and the store then changed
    _move(target_url)
    Agent.objects.filter(pk=agent.pk).update(name="Renamed")
    AgentFactory(slug="newcomer")

    # when it moves again, then it refuses, naming the table and the row
    with pytest.raises(
        CommandError, match=f"agents_agent: the target's row {agent.pk} is not"
    ) as refused:
        _move(target_url)
    assert refused.value.returncode == 1
    moved = target()
    assert list(Agent._base_manager.using(moved).values_list("slug", "name")) == [
        ("alice-bot", agent.name)
    ]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("not a url", "not a database URL: 'not a url'"),
        ("sqlite:////tmp/other.sqlite3", "the target must be PostgreSQL"),
        ("mysql://root@127.0.0.1/memoryhub", "the target must be PostgreSQL"),
        ("postgres://postgres@127.0.0.1:5432/", "the URL names no database"),
        ("postgres://postgres@127.0.0.1:1/memoryhub_move_x", "cannot connect to the target"),
    ],
)
def test_a_url_that_is_not_a_postgresql_database_is_refused(url, message):
    with pytest.raises(CommandError) as refused:
        _move(url)
    assert str(refused.value).startswith(message)


@pytest.mark.postgres
def test_the_database_the_store_already_uses_is_refused():
    s = connection.settings_dict
    url = f"postgres://{s['USER']}@{s['HOST']}:{s['PORT'] or 5432}/{s['NAME']}"
    with pytest.raises(CommandError, match="the target is the database this store already uses"):
        _move(url)


def test_the_command_exits_non_zero_with_the_reason():
    done = subprocess.run(
        [sys.executable, "manage.py", "move_to_postgres", "mysql://root@127.0.0.1/memoryhub"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr.strip()) == (
        1,
        "CommandError: the target must be PostgreSQL (postgres://user@host:5432/name), not mysql",
    )


def test_tables_are_copied_after_the_tables_they_point_to():
    plans = copy_plan()
    placed: set = set()
    for plan in plans:
        parents = {
            f.related_model for f in plan.model._meta.concrete_fields
            if f.is_relation and f not in plan.deferred
        }  # fmt: skip
        assert parents <= placed, plan.label
        placed.add(plan.model)
    assert [p.label for p in plans[:2]] == ["contenttypes.ContentType", "auth.Permission"]
    assert {p.label: [f.name for f in p.deferred] for p in plans if p.deferred} == {
        "facts.Fact": ["superseded_by"]
    }
    assert len(plans) == len({p.table for p in plans})  # each table once


def test_the_checksum_is_the_same_for_the_same_rows_in_any_order_and_form():
    vector = np.array([0.25, -1.5, 3.0], dtype=np.float32)
    at = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    # as SQLite hands them back, and as PostgreSQL does (another zone, a parsed vector, jsonb)
    sqlite_rows = [(1, at, vector, {"a": 1, "b": [2.5]}), (2, None, None, {})]
    parsed = Message._meta.get_field("embedding").from_db_value("[0.25,-1.5,3]", None, None)
    pg_rows = [
        (2, None, None, {}),
        (1, at.astimezone(timezone(timedelta(hours=2))), parsed, {"b": [2.5], "a": 1}),
    ]
    one, other, changed = Checksum(), Checksum(), Checksum()
    for row in sqlite_rows:
        one.add(row)
    for row in pg_rows:
        other.add(row)
    for row in [sqlite_rows[0], (2, None, None, {"c": 1})]:
        changed.add(row)

    assert one == other
    assert one.count == 2
    assert changed != one
    assert changed.count == 2
