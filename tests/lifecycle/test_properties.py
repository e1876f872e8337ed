"""Property tests: compaction cuts only on a user+assistant pair boundary and never splits a
tool call from its results, and nothing a user stored is lost by any sequence of appends,
compactions, consolidations and resets while the model fails at random."""

import itertools
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from apps.agents.models import Agent
from apps.conversations.models import Message, Session
from apps.entries.models import Entry
from apps.lifecycle.models import HistoryEntry
from apps.lifecycle.services import boundaries
from tests.factories import AgentFactory, issue_key
from tests.lifecycle.helpers import faithful, use_llm
from tests.support.client import ApiClient
from tests.support.llm_server import Completion, Reply, Status

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


# --- compaction boundaries (pure) --------------------------------------------------------
@st.composite
def histories(draw):
    """Random turns: user and assistant messages, assistants calling tools whose results
    follow (by id, or without an id), sizes and some equal timestamps."""
    turns, ids = [], itertools.count()
    at = T0
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "system"]))
        at += timedelta(seconds=draw(st.sampled_from([0, 1, 1, 1])))
        size = draw(st.integers(0, 300))
        if kind != "calls":
            turns.append(boundaries.Turn(kind, at, size))
            continue
        calls = tuple(f"c{next(ids)}" for _ in range(draw(st.integers(1, 3))))
        turns.append(boundaries.Turn("assistant", at, size, calls=calls))
        for call in calls:
            if draw(st.booleans()):  # a user may speak before the result comes back
                at += timedelta(seconds=1)
                turns.append(boundaries.Turn("user", at, draw(st.integers(0, 300))))
            at += timedelta(seconds=1)
            with_id = draw(st.sampled_from([True, True, True, False]))
            turns.append(
                boundaries.Turn(
                    "tool", at, draw(st.integers(0, 300)), result_of=call if with_id else None
                )
            )
    return turns


def _splits(turns, cut) -> list[str]:
    """What a cut before `cut` breaks: tool results separated from their call, a cut
    between equal times, or a cut that is not on a user+assistant pair boundary."""
    broken = []
    caller, last_caller = {}, None
    for j, t in enumerate(turns):
        if t.calls:
            caller.update(dict.fromkeys(t.calls, j))
            last_caller = j
        if t.role == "tool":
            k = caller.get(t.result_of, last_caller if last_caller is not None else j - 1)
            if k is not None and k < cut <= j:
                broken.append(f"tool result {j} from its call {k}")
    if turns[cut].created_at <= turns[cut - 1].created_at:
        broken.append("equal times")
    # Seed 000's pair boundary: the kept part opens with the user, and the archived part
    # ends with the assistant's (or its tool's) answer, system notes aside.
    answered = [t.role for t in turns[:cut] if t.role != "system"]
    if turns[cut].role != "user" or not answered or answered[-1] not in ("assistant", "tool"):
        broken.append(f"cut {cut} is inside a user+assistant pair")
    return broken


@settings(max_examples=400, derandomize=True, database=None)
@given(histories(), st.integers(0, 3000), st.integers(1, 10))
def test_compaction_cuts_only_on_pair_boundaries_never_splitting_a_tool_call(turns, target, keep):
    size_cut = boundaries.cut_for_size(turns, target=target, limit=target + 500)
    keep_cut = boundaries.cut_keep_last(turns, keep=keep)
    for cut in (size_cut, keep_cut):
        if cut is None:
            continue
        assert 0 < cut < len(turns)
        assert _splits(turns, cut) == []
    if keep_cut is not None:
        assert len(turns) - keep_cut >= keep  # write-then-compact keeps at least `keep`
    pairs = [i for i in range(1, len(turns)) if _splits(turns, i) == []]
    assert boundaries.pair_cuts(turns) == pairs
    # No pair boundary: both wait. One: a size cut is always made when over the limit.
    if not pairs:
        assert (size_cut, keep_cut) == (None, None)
    elif sum(t.size for t in turns) > target + 500:
        assert size_cut is not None


# --- nothing is lost ---------------------------------------------------------------------
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 8)),
        st.tuples(
            st.sampled_from(["compact", "consolidate", "reset", "summarize", "flush"]), st.just(0)
        ),
    ),
    min_size=1,
    max_size=12,
)
# Failures first: they are what the property is about, and hypothesis leans to the start.
ANSWERS = st.lists(st.sampled_from(["500", "garbage", "faithful"]), min_size=40, max_size=40)


@pytest.mark.django_db
@settings(
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(operations=OPERATIONS, answers=ANSWERS)
@example(operations=[("append", 8), ("reset", 0)], answers=["500"] * 40)
@example(
    operations=[("append", 8), ("consolidate", 0), ("append", 3), ("reset", 0)],
    answers=["garbage", "faithful"] * 20,
)
@example(
    operations=[("append", 8), ("compact", 0), ("append", 8), ("reset", 0)],
    answers=["faithful"] * 40,
)
def test_nothing_stored_is_lost(settings, client, llm_server, operations, answers):
    use_llm(settings, llm_server)
    agent = AgentFactory(
        slug=f"p-{uuid.uuid4().hex[:12]}",
        settings={
            "max_history_bytes": 300,
            "max_history_messages": 4,
            "memory_window": 5,
            "consolidation_keep": 2,
            # The harder mode: only what no LLM consolidation covered is archived on reset,
            # so the "faithful" model's history entries must hold the rest.
            "reset_archive": "fallback",
        },
    )
    api = ApiClient(key=issue_key(agent), client=client)
    session = Session.objects.create(agent=agent, key="s")
    outcomes = iter(answers)

    def model(body):
        outcome = next(outcomes, "faithful")
        if outcome == "500":
            return Status(500, "down")
        return faithful(body) if outcome == "faithful" else Completion("no JSON here")

    llm_server._queue.clear()
    llm_server.script(Reply(model, repeat=True))
    written, n = [], itertools.count()
    for op, size in operations:
        if op == "append":
            # Longer than raw_fallback_chars: a [raw-fallback] entry alone cannot keep them.
            texts = [f"fact-{(i := next(n))} {'x' * 250} end-{i}" for _ in range(size)]
            body = {
                "messages": [
                    {"role": "user" if i % 2 == 0 else "assistant", "content": t}
                    for i, t in enumerate(texts)
                ]
            }
            assert api.post(f"/sessions/{session.id}/messages", body).status_code == 201
            written += texts
        else:
            assert api.post(f"/sessions/{session.id}/{op}").status_code == 200

    kept = _everything_kept(agent)
    assert [t for t in written if t not in kept] == []


def _everything_kept(agent: Agent) -> str:
    parts = list(Message.objects.filter(agent=agent).values_list("content", flat=True))
    parts += HistoryEntry.objects.filter(agent=agent).values_list("content", flat=True)
    parts += Entry.objects.filter(agent=agent, kind="archive").values_list("content", flat=True)
    return "\n".join(parts)
