"""memory_save (seed 001): structured store + daily log, dedup on write, categories."""

import pytest
from django.utils import timezone

from apps.entries.models import Entry
from apps.facts.models import Category, Fact, FactVersion
from apps.search.tasks import embed_task
from tests.memory.helpers import BROKEN, HASH, MINILM, use_embedder

pytestmark = pytest.mark.django_db


def save(api, content, **extra):
    return api.post("/memory/save", {"content": content, **extra})


def test_free_text_is_enough_a_key_is_derived_and_the_day_is_logged(api, agent):
    # when
    response = save(api, "My cat's name is Whiskerino")

    # then
    assert response.status_code == 200
    body = response.json()
    fact = Fact.objects.get(agent=agent)
    today = timezone.now().date().isoformat()
    assert (body["action"], body["deduped"], body["existing_id"], body["log"]) == (
        "created",
        False,
        None,
        f"memory/{today}.md",
    )
    assert (body["fact"]["id"], body["fact"]["key"], body["fact"]["category"]) == (
        fact.pk,
        "my-cat-s-name-is-whiskerino",
        "general",
    )
    assert (fact.value, fact.source, fact.importance, fact.access_count) == (
        "My cat's name is Whiskerino",
        "agent",
        0.5,
        0,
    )
    log = Entry.objects.get(agent=agent, name=f"memory/{today}.md")
    line = log.content.splitlines()[2]
    assert log.content.startswith(f"# {today}\n\n- ")
    assert line.endswith(" [general/my-cat-s-name-is-whiskerino] My cat's name is Whiskerino")


def test_saves_append_to_the_same_daily_log(api, agent):
    save(api, "first fact", category="misc")
    save(api, "second fact\nover two lines", category="misc", key="second")

    log = Entry.objects.get(agent=agent, name__startswith="memory/")
    lines = log.content.splitlines()
    assert len(lines) == 5
    assert lines[2].endswith(" [misc/first-fact] first fact")
    assert lines[3].endswith(" [misc/second] second fact")
    assert lines[4] == "  over two lines"


def test_saving_the_same_fact_twice_reinforces_one_fact(api, agent):
    first = save(api, "The user prefers green tea", category="food").json()

    second = save(api, "the user prefers green tea!", category="food").json()

    fact = Fact.objects.get(agent=agent)
    assert (second["action"], second["deduped"], second["existing_id"]) == (
        "reinforced",
        True,
        first["fact"]["id"],
    )
    assert (fact.value, fact.access_count) == ("The user prefers green tea", 1)
    assert fact.last_accessed_at is not None
    assert FactVersion.objects.filter(fact=fact).count() == 1


def test_same_key_with_a_new_value_updates_with_a_version(api, agent):
    save(api, "Lives in Berlin", category="profile", key="city")

    response = save(api, "Lives in Hamburg", category="profile", key="city").json()

    fact = Fact.objects.get(agent=agent)
    assert (response["action"], response["existing_id"], fact.value) == (
        "updated",
        fact.pk,
        "Lives in Hamburg",
    )
    versions = list(FactVersion.objects.filter(fact=fact).values_list("old_value", "new_value"))
    assert versions == [("", "Lives in Berlin"), ("Lives in Berlin", "Lives in Hamburg")]


@pytest.mark.slow
def test_a_paraphrase_above_the_threshold_leaves_one_fact_with_two_versions(api, agent, settings):
    use_embedder(settings, MINILM)
    save(api, "The user prefers green tea", category="food")

    response = save(api, "User likes green tea", category="food").json()

    fact = Fact.objects.get(agent=agent)
    assert (response["action"], response["deduped"], response["existing_id"]) == (
        "updated",
        True,
        fact.pk,
    )
    assert round(response["similarity"], 3) == 0.935
    assert fact.value == "User likes green tea"
    assert list(
        FactVersion.objects.filter(fact=fact).values_list("number", "old_value", "new_value")
    ) == [
        (1, "", "The user prefers green tea"),
        (2, "The user prefers green tea", "User likes green tea"),
    ]


@pytest.mark.slow
def test_below_the_threshold_two_facts_are_kept(api, agent, settings):
    use_embedder(settings, MINILM)
    save(api, "The user prefers green tea", category="food")

    response = save(api, "I drink green tea every morning", category="food").json()

    assert (response["action"], response["deduped"]) == ("created", False)
    assert list(Fact.objects.filter(agent=agent).values_list("value", flat=True)) == [
        "The user prefers green tea",
        "I drink green tea every morning",
    ]


@pytest.mark.slow
def test_the_threshold_is_a_per_agent_setting(api, agent, settings):
    use_embedder(settings, MINILM)
    agent.settings = {"fact_dedup_threshold": 0.95}
    agent.save()
    save(api, "The user prefers green tea", category="food")

    response = save(api, "User likes green tea", category="food").json()

    assert response["action"] == "created"
    assert Fact.objects.filter(agent=agent).count() == 2


@pytest.mark.slow
def test_a_fact_without_category_gets_the_nearest_category_or_general(api, agent, settings):
    use_embedder(settings, MINILM)
    save(api, "Rex is the neighbour's dog", category="pets")

    cat = save(api, "My cat's name is Whiskerino").json()
    budget = save(api, "The quarterly budget review is on Monday").json()

    assert cat["fact"]["category"] == "pets"
    assert budget["fact"]["category"] == "general"
    assert sorted(Category.objects.filter(agent=agent).values_list("name", flat=True)) == [
        "general",
        "pets",
    ]
    assert all(c.embedding is not None for c in Category.objects.filter(agent=agent))


def test_dedup_is_per_category(api, agent):
    save(api, "Blue", category="colours")

    response = save(api, "Blue", category="moods").json()

    assert response["action"] == "created"
    assert Fact.objects.filter(agent=agent).count() == 2


def test_with_the_embedder_down_the_fact_is_kept_and_embedded_later(api, agent, settings):
    use_embedder(settings, BROKEN)

    first = save(api, "Lives in Berlin", category="profile").json()
    again = save(api, "lives in berlin", category="profile").json()

    fact = Fact.objects.get(agent=agent)
    assert (first["action"], again["action"], first["fact"]["embedded"]) == (
        "created",
        "reinforced",
        False,
    )
    assert fact.embedding is None
    assert fact.embedding_error != ""
    # when the embedder is back, the retry task (enqueued on commit; eager here) succeeds
    use_embedder(settings, HASH)
    assert embed_task.delay("facts", [fact.pk]).get() == 1
    fact.refresh_from_db()
    assert (fact.embedding is not None, fact.embedding_model) == (True, "fake-hash@384")


@pytest.mark.parametrize(
    ("body", "status", "msg"),
    [
        ({"content": ""}, 422, "content must not be empty"),
        ({"content": "   "}, 422, "content must not be empty"),
        ({"content": "a\x00b"}, 422, "content must not contain NUL characters"),
        ({"content": "x", "category": "Bad/../Cat!"}, 422, None),
        ({"content": "x", "key": "two\nlines"}, 422, None),
        ({"content": "x", "importance": 1.5}, 422, None),
        ({"content": "x", "session_id": "no-such-session"}, 404, None),
        ({}, 422, None),
    ],
)
def test_bad_input_is_rejected_and_writes_nothing(api, agent, body, status, msg):
    response = api.post("/memory/save", body)

    assert response.status_code == status
    if msg is not None:
        assert response.json()["detail"][0]["msg"] == msg
    assert "detail" in response.json()
    assert Fact.objects.count() == 0
    assert Entry.objects.count() == 0


def test_save_records_the_session(api, agent, session):
    response = save(api, "Likes jazz", session_id="chat-1").json()

    assert response["fact"]["session_id"] == str(session.id)


def test_other_agents_session_is_404(api, other_api, session):
    response = other_api.post("/memory/save", {"content": "x", "session_id": str(session.id)})

    assert response.status_code == 404
    assert Fact.objects.count() == 0
