"""Seed 002's tri-hybrid get_context at its exact numbers: a message found by several legs
is given once with every leg named; the salience leg takes importance >= 0.85; the relevance
leg takes cosine > 0.655. Vectors come from a loopback embeddings server whose answers the
test chooses, so a similarity is exactly what the test says."""

import math

import pytest

from apps.providers.token_counts import count_tokens

pytestmark = pytest.mark.django_db

DIMS = 384


def append(api, session, messages):
    """Append `messages` (content strings or message dicts) as user messages; their ids."""
    body = {
        "messages": [
            {"role": "user", **(m if isinstance(m, dict) else {"content": m})} for m in messages
        ]
    }
    response = api.post(f"/sessions/{session.id}/messages", body)
    assert response.status_code == 201, response.content
    return [m["id"] for m in response.json()["messages"]]


def context(api, session, **extra):
    response = api.post("/context", {"session_id": str(session.id), "lifecycle": "off", **extra})
    assert response.status_code == 200, response.content
    return response.json()


# --- deduplicated by message id -----------------------------------------------------------
KEY = "the spare key is under the blue flowerpot"


def test_a_message_every_leg_finds_is_given_once_with_all_three_legs(
    api, session, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # embed them
        ids = append(
            api,
            session,
            [f"filler {n}" for n in range(8)]
            + [{"content": KEY, "importance": 0.9}, "filler 8", "filler 9"],
        )
    target = ids[8]

    body = context(api, session, query=KEY)

    found = [m["id"] for m in body["messages"]]
    assert found == ids[1:]  # the recency leg's 10, the target among them once
    assert found.count(target) == 1
    [message] = [m for m in body["messages"] if m["id"] == target]
    assert message["legs"] == ["recency", "salience", "relevance"]
    assert (round(message["similarity"], 6), message["importance"]) == (1.0, 0.9)
    assert [m["legs"] for m in body["messages"] if m["id"] != target] == [["recency"]] * 9
    # the memory leg (issue 24) gives only the one message no other leg holds
    [window] = body["memory"]
    assert [(m["id"], m["legs"], m["hit"]) for m in window["messages"]] == [
        (ids[0], ["memory"], True)
    ]
    memory = count_tokens(window["header"]) + count_tokens("filler 0")
    assert (window["tokens"], body["tokens"]["memory"]) == (memory, memory)
    # its tokens count once: in what was found as in what was given
    tokens = sum(count_tokens(m["content"]) for m in body["messages"])
    assert body["tokens"]["messages"] == tokens
    assert (body["usage"]["required_tokens"], body["tokens"]["total"]) == (
        tokens + memory,
        tokens + memory,
    )
    assert body["dropped"] == []


# --- salience: importance >= 0.85 ---------------------------------------------------------
def test_the_salience_leg_takes_importance_085_and_not_084(api, session):
    ids = append(
        api,
        session,
        [
            {"content": "at the threshold", "importance": 0.85},
            {"content": "just under", "importance": 0.84},
            {"content": "a hair under", "importance": 0.8499},
            {"content": "far over", "importance": 1.0},
        ]
        + [f"filler {n}" for n in range(10)],
    )

    body = context(api, session)

    assert [(m["id"], m["legs"]) for m in body["messages"][:2]] == [
        (ids[0], ["salience"]),
        (ids[3], ["salience"]),
    ]
    assert [m["id"] for m in body["messages"]] == [ids[0], ids[3], *ids[4:]]
    assert ids[1] not in [m["id"] for m in body["messages"]]
    assert ids[2] not in [m["id"] for m in body["messages"]]
    assert body["dropped"] == []


def test_the_salience_threshold_is_a_per_agent_setting(api, agent, session):
    agent.settings = {"salience_threshold": 0.84}
    agent.save()
    ids = append(
        api,
        session,
        [{"content": "just under", "importance": 0.84}, {"content": "x", "importance": 0.83}]
        + [f"filler {n}" for n in range(10)],
    )

    body = context(api, session)

    assert [m["id"] for m in body["messages"]] == [ids[0], *ids[2:]]


# --- relevance: cosine > 0.655 ------------------------------------------------------------
QUERY = "where did I leave the key"
ABOVE, BELOW, FAR = "the key: above the threshold", "the key: below the threshold", "unrelated"


def _unit(axis: int) -> list[float]:
    v = [0.0] * DIMS
    v[axis] = 1.0
    return v


def _at(cosine: float, axis: int) -> list[float]:
    """A unit vector at exactly `cosine` to the query's (axis 0), leaning towards `axis`."""
    v = [0.0] * DIMS
    v[0], v[axis] = cosine, math.sqrt(1.0 - cosine * cosine)
    return v


@pytest.fixture
def scripted_vectors(settings, llm_server):
    """The OpenAI-compatible embedder on the loopback server; `vectors[text]` is the vector
    the server gives `text` (any other text: its own axis, orthogonal to everything)."""
    vectors: dict[str, list[float]] = {}
    others: dict[str, int] = {}

    def embed(texts: list[str]) -> list[list[float]]:
        return [
            vectors.get(t) or _unit(others.setdefault(t, DIMS - 1 - len(others))) for t in texts
        ]

    llm_server.embed_fn = embed
    settings.MEMORYHUB_PROVIDERS = {
        "embedding": {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {
                "URL": llm_server.url,
                "MODEL": "scripted",
                "DIMENSIONS": DIMS,
                "TIMEOUT": 5.0,
            },
        },
        "llm": None,
    }
    return vectors


@pytest.mark.parametrize(("above", "below"), [(0.6551, 0.6549), (0.656, 0.654), (0.9, 0.5)])
def test_the_relevance_leg_takes_cosine_just_over_0655_and_not_just_under(
    api, session, django_capture_on_commit_callbacks, scripted_vectors, above, below
):
    scripted_vectors.update({QUERY: _unit(0), ABOVE: _at(above, 1), BELOW: _at(below, 2)})
    with django_capture_on_commit_callbacks(execute=True):  # embed them
        ids = append(api, session, [ABOVE, BELOW, FAR] + [f"filler {n}" for n in range(10)])

    body = context(api, session, query=QUERY)

    assert body["degraded"] == []
    relevant = [(m["id"], m["legs"], round(m["similarity"], 4)) for m in body["messages"]
                if m["similarity"] is not None]  # fmt: skip
    assert relevant == [(ids[0], ["relevance"], above)]
    assert [m["id"] for m in body["messages"]] == [ids[0], *ids[3:]]
    assert body["dropped"] == []


def test_the_relevance_threshold_is_a_per_agent_setting(
    api, agent, session, django_capture_on_commit_callbacks, scripted_vectors
):
    agent.settings = {"relevance_threshold": 0.5}
    agent.save()
    scripted_vectors.update({QUERY: _unit(0), ABOVE: _at(0.6551, 1), BELOW: _at(0.6549, 2)})
    with django_capture_on_commit_callbacks(execute=True):
        ids = append(api, session, [ABOVE, BELOW, FAR] + [f"filler {n}" for n in range(10)])

    body = context(api, session, query=QUERY)

    assert [(m["id"], m["legs"]) for m in body["messages"][:2]] == [
        (ids[0], ["relevance"]),
        (ids[1], ["relevance"]),
    ]
    assert [m["id"] for m in body["messages"]] == [ids[0], ids[1], *ids[3:]]
