"""Mixed concurrent fact writes on one agent: no deadlock, no lost update (PostgreSQL).

8 threads x 50 operations on one agent, over one shared pool of facts: saves (new texts that
several threads race to create, and re-saves of existing texts, which reinforce), PATCH-like
updates of importance and of value, supersedes, recalls and touches. Each thread's sequence
is drawn from random.Random(thread) before it runs; the operations are chosen so that the end
state is exact whatever the interleaving:

- a new text saved by several threads is one fact; every save after the first reinforces it;
- every importance update of a fact sets the same importance;
- a value update writes a value nobody else writes, so each adds exactly one version;
- a supersede replaces the chain's current head (re-read after a Conflict, as a client does
  after a 409), so each chain grows by exactly one fact per supersede;
- a touch, a reinforcing save and a recall hit each add exactly one access to the fact; which
  facts a recall returns depends on timing, so each call's hits are recorded.
"""

import random
import threading
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pytest
from django.db import connection

from apps.agents.models import Agent
from apps.agents.users import AGENT_ONLY
from apps.core.errors import Conflict
from apps.facts.models import Category, Fact, FactVersion
from apps.facts.services.recall import facts_recall
from apps.facts.services.salience_update import facts_touch
from apps.facts.services.save import fact_save
from apps.facts.services.versions import fact_supersede, fact_update
from apps.search.embedding import embed_text

THREADS = 8
OPS_PER_THREAD = 50
STABLE = 12  # values never change: re-saved (reinforced), importance-updated, touched
EDITED = 8  # values edited in place; importance-updated, touched
CHAINS = 4  # superseded again and again; their current heads are touched
FRESH = 30  # texts not saved yet: threads race to create them
WEIGHTS = {
    "save_fresh": 18,
    "resave": 14,
    "importance": 14,
    "value": 14,
    "supersede": 10,
    "recall": 12,
    "touch": 18,
}
SUPERSEDE_ATTEMPTS = 100


def _words(rng: random.Random, n: int) -> str:
    """Pseudo-words, so that no two texts share a word and only exact text deduplicates."""
    return " ".join(
        "".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(4))
        for _ in range(n)
    )


_pool = random.Random("pool")
STABLE_TEXTS = [f"stable {_words(_pool, 4)}" for _ in range(STABLE)]
EDITED_TEXTS = [f"edited {_words(_pool, 4)}" for _ in range(EDITED)]
CHAIN_TEXTS = [f"chain {_words(_pool, 4)}" for _ in range(CHAINS)]
FRESH_TEXTS = [f"fresh {_words(_pool, 4)}" for _ in range(FRESH)]
# Pool index (STABLE + EDITED facts) -> the only importance any update gives that fact.
IMPORTANCE = [round(0.05 + 0.04 * n, 2) for n in range(STABLE + EDITED)]


@dataclass(frozen=True)
class Step:
    op: str
    text: str = ""  # save_fresh, recall: the text; value, supersede: the new value
    n: int = 0  # resave: stable index; importance, value: pool index; supersede: chain
    picks: tuple[int, ...] = ()  # touch: pool indexes, in the (unsorted) order passed
    chain: int | None = None  # touch: also this chain's current head


def plan(t: int) -> list[Step]:
    """Thread t's 50 operations, every random draw made up front."""
    rng = random.Random(t)
    steps = []
    for i in range(OPS_PER_THREAD):
        op = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
        if op == "save_fresh":
            steps.append(Step(op, text=rng.choice(FRESH_TEXTS)))
        elif op == "resave":
            steps.append(Step(op, n=rng.randrange(STABLE)))
        elif op == "importance":
            steps.append(Step(op, n=rng.randrange(STABLE + EDITED)))
        elif op == "value":
            n = rng.randrange(STABLE, STABLE + EDITED)
            steps.append(Step(op, n=n, text=f"edited {n} by t{t} op{i}: {_words(rng, 3)}"))
        elif op == "supersede":
            c = rng.randrange(CHAINS)
            steps.append(Step(op, n=c, text=f"chain {c} by t{t} op{i}: {_words(rng, 3)}"))
        elif op == "recall":
            steps.append(Step(op, text=rng.choice(STABLE_TEXTS + EDITED_TEXTS + FRESH_TEXTS)))
        else:
            picks = tuple(rng.sample(range(STABLE + EDITED), rng.randint(1, 6)))
            chain = rng.randrange(CHAINS) if rng.random() < 0.5 else None
            steps.append(Step(op, picks=picks, chain=chain))
    return steps


PLANS = [plan(t) for t in range(THREADS)]
STEPS = [step for steps in PLANS for step in steps]
OPS = Counter(step.op for step in STEPS)
FRESH_SAVES = Counter(step.text for step in STEPS if step.op == "save_fresh")
# Accesses that do not depend on timing: touches, re-saves, fresh saves after the first.
PLANNED_ACCESSES = (
    sum(len(s.picks) + (s.chain is not None) for s in STEPS if s.op == "touch")
    + OPS["resave"]
    + OPS["save_fresh"]
    - len(FRESH_SAVES)
)


@dataclass
class ThreadLog:
    errors: list[str] = field(default_factory=list)
    actions: Counter = field(default_factory=Counter)  # fact_save's action -> count
    chain_touches: Counter = field(default_factory=Counter)  # chain head id -> touches
    recall_hits: Counter = field(default_factory=Counter)  # fact id -> hits
    conflicts: int = 0  # supersedes that found the head already replaced and re-read it


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))  # unit vectors


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_8_threads_x_50_mixed_fact_operations_on_one_agent(agent):
    # given: the plan is what the seeds make it
    assert OPS == {
        "save_fresh": 80,
        "resave": 47,
        "importance": 44,
        "value": 60,
        "supersede": 43,
        "recall": 45,
        "touch": 81,
    }
    assert (len(FRESH_SAVES), PLANNED_ACCESSES) == (30, 406)
    # ...texts far enough apart for the hash embedder that only exact text deduplicates
    vectors = [embed_text(t).vector for t in STABLE_TEXTS + FRESH_TEXTS]
    closest = max(_cosine(a, b) for i, a in enumerate(vectors) for b in vectors[i + 1 :])
    assert closest < agent.config.fact_dedup_threshold - 0.3
    # ...and the pool
    pool = [fact_save(agent=agent, content=t, category="stable") for t in STABLE_TEXTS]
    pool += [fact_save(agent=agent, content=t, category="edited") for t in EDITED_TEXTS]
    roots = [
        fact_save(agent=agent, content=t, category="chain", key=f"chain-{c}")
        for c, t in enumerate(CHAIN_TEXTS)
    ]
    assert {r.action for r in pool + roots} == {"created"}
    ids = [r.fact.pk for r in pool]
    roots = [r.fact.pk for r in roots]

    def head(me: Agent, c: int) -> Fact:
        return Fact.objects.current().get(agent=me, category__name="chain", key=f"chain-{c}")

    def run(me: Agent, step: Step, log: ThreadLog) -> None:
        if step.op == "save_fresh":
            log.actions[fact_save(agent=me, content=step.text, category="fresh").action] += 1
        elif step.op == "resave":
            result = fact_save(agent=me, content=STABLE_TEXTS[step.n], category="stable")
            assert result.fact.pk == ids[step.n]
            log.actions[result.action] += 1
        elif step.op in ("importance", "value"):
            fact = Fact.objects.get(pk=ids[step.n])  # as PATCH /facts/{id} loads it
            if step.op == "importance":
                fact_update(agent=me, fact=fact, changed_by="agent", importance=IMPORTANCE[step.n])
            else:
                fact_update(agent=me, fact=fact, changed_by="agent", value=step.text)
        elif step.op == "supersede":
            for _ in range(SUPERSEDE_ATTEMPTS):
                try:
                    fact_supersede(
                        agent=me, fact=head(me, step.n), value=step.text, changed_by="agent"
                    )
                    return
                except Conflict:  # another thread replaced this head first: re-read it
                    log.conflicts += 1
            raise AssertionError(f"{SUPERSEDE_ATTEMPTS} supersedes of chain {step.n} conflicted")
        elif step.op == "recall":
            found = facts_recall(agent=me, query=step.text, audience=AGENT_ONLY)
            log.recall_hits.update(hit.fact.pk for hit in found.hits)
        else:
            touched = [ids[n] for n in step.picks]
            if step.chain is not None:
                touched.append(head(me, step.chain).pk)
                log.chain_touches[touched[-1]] += 1
            facts_touch(agent=me, fact_ids=touched)

    barrier = threading.Barrier(THREADS)
    logs = [ThreadLog() for _ in range(THREADS)]

    def worker(t: int) -> None:
        log = logs[t]
        try:
            me = Agent.objects.get(pk=agent.pk)
            barrier.wait(timeout=60)
            for i, step in enumerate(PLANS[t]):
                try:
                    run(me, step, log)
                except Exception:
                    log.errors.append(f"thread {t} op {i} {step}:\n{traceback.format_exc()}")
        except Exception:
            log.errors.append(f"thread {t}:\n{traceback.format_exc()}")
        finally:
            connection.close()

    # when
    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    elapsed = time.monotonic() - started

    # then: no error, no deadlock
    assert not any(thread.is_alive() for thread in threads)
    errors = [e for log in logs for e in log.errors]
    deadlocks = [e for e in errors if "deadlock detected" in e]
    recall_hits = sum((log.recall_hits for log in logs), Counter())
    print(
        f"\n{THREADS}x{OPS_PER_THREAD} ops in {elapsed:.1f}s: {len(errors)} errors "
        f"({len(deadlocks)} deadlocks), {sum(log.conflicts for log in logs)} supersede "
        f"conflicts re-read, {recall_hits.total()} recall hits"
    )
    assert (len(errors), len(deadlocks)) == (0, 0), "\n".join(errors[:3])
    assert errors == []

    # ...every save deduplicated on exact text: one fact per new text, the rest reinforced
    actions = sum((log.actions for log in logs), Counter())
    assert actions == {"created": 30, "reinforced": 97}  # 47 re-saves + 80 - 30 fresh saves
    facts = Fact.objects.filter(agent=agent)
    fresh = dict(facts.filter(category__name="fresh").values_list("value", "pk"))
    assert sorted(fresh) == sorted(FRESH_SAVES)

    # ...exact counts: facts, current and superseded, categories, versions
    assert facts.count() == STABLE + EDITED + CHAINS + 43 + 30 == 97
    assert facts.filter(valid_to__isnull=True).count() == STABLE + EDITED + CHAINS + 30 == 54
    assert facts.filter(valid_to__isnull=False).count() == 43
    assert list(Category.objects.filter(agent=agent).values_list("name", flat=True)) == [
        "chain",
        "edited",
        "fresh",
        "stable",
    ]
    # created: 12 + 8 + 4 + 30; a value update: 1; a supersede: 2 (old and new fact)
    assert FactVersion.objects.filter(fact__agent=agent).count() == 54 + 60 + 2 * 43 == 200

    # ...versions per fact, numbered 1..n
    expected = dict.fromkeys(ids[:STABLE] + list(fresh.values()), 1)
    for n in range(STABLE, STABLE + EDITED):
        expected[ids[n]] = 1 + sum(1 for s in STEPS if s.op == "value" and s.n == n)
    for c, root in enumerate(roots):
        chain = [root]
        while (successor := Fact.objects.get(pk=chain[-1]).superseded_by_id) is not None:
            chain.append(successor)
        values = sorted(s.text for s in STEPS if s.op == "supersede" and s.n == c)
        assert chain[-1] == head(agent, c).pk
        assert sorted(facts.filter(pk__in=chain[1:]).values_list("value", flat=True)) == values
        assert facts.filter(pk__in=chain[:-1], valid_to__isnull=True).count() == 0
        # created or "supersedes #", and "superseded by #" unless it is the head
        expected.update({pk: 1 + (pk != chain[-1]) for pk in chain})
    numbers = defaultdict(list)
    for pk, number in FactVersion.objects.filter(fact__agent=agent).values_list(
        "fact_id", "number"
    ):
        numbers[pk].append(number)
    assert {pk: sorted(n) for pk, n in numbers.items()} == {
        pk: list(range(1, n + 1)) for pk, n in expected.items()
    }
    # ...an edited fact's history links every value written to it, none lost
    for n in range(STABLE, STABLE + EDITED):
        history = list(FactVersion.objects.filter(fact_id=ids[n]).order_by("number"))
        assert [v.old_value for v in history[1:]] == [v.new_value for v in history[:-1]]
        written = sorted(s.text for s in STEPS if s.op == "value" and s.n == n)
        assert sorted(v.new_value for v in history[1:]) == written
        assert facts.get(pk=ids[n]).value == history[-1].new_value

    # ...accesses: one per touch, reinforcing save and recall hit of each fact, none lost
    accesses = Counter()
    for s in STEPS:
        if s.op == "touch":
            accesses.update(ids[n] for n in s.picks)
        elif s.op == "resave":
            accesses[ids[s.n]] += 1
    for text, saves in FRESH_SAVES.items():
        accesses[fresh[text]] += saves - 1
    for log in logs:
        accesses.update(log.chain_touches)
    accesses.update(recall_hits)
    stored = dict(facts.values_list("pk", "access_count"))
    assert {pk: n for pk, n in stored.items() if n} == {pk: n for pk, n in accesses.items() if n}
    assert sum(stored.values()) == 406 + recall_hits.total()

    # ...importance: every update of a fact set the same value; the others kept 0.5
    updated = {s.n for s in STEPS if s.op == "importance"}
    assert dict(facts.filter(pk__in=ids).values_list("pk", "importance")) == {
        pk: IMPORTANCE[n] if n in updated else 0.5 for n, pk in enumerate(ids)
    }
