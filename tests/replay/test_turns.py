"""Pairing tool results with their calls (apps/conversations/tool_call_pairs.py), ids reused across
turns included (some model servers number calls per turn)."""

from types import SimpleNamespace

from apps.conversations.tool_call_pairs import answers, call_ids, open_results, widen_to_calls


def msg(role, calls=None, answers=None, label=""):
    tool_calls = [{"id": c, "type": "function"} for c in calls] if calls is not None else None
    return SimpleNamespace(role=role, tool_calls_json=tool_calls, tool_call_id=answers, label=label)


def labels(messages):
    return [m.label for m in messages]


def test_call_ids_and_answers_read_only_their_roles():
    assert call_ids(msg("assistant", ["a", "b"])) == ("a", "b")
    assert call_ids(msg("user", ["a"])) == ()
    odd = SimpleNamespace(
        role="assistant", tool_call_id=None, tool_calls_json=[{"x": 1}, "junk", {"id": ""}]
    )
    assert call_ids(odd) == ()
    assert answers(msg("tool", answers="a")) == "a"
    assert answers(msg("user", answers="a")) is None
    assert answers(msg("tool")) is None


def test_a_result_is_open_until_a_call_of_its_id_comes_before_it():
    assert open_results([msg("tool", answers="a"), msg("assistant", ["a"])]) == {"a"}
    assert open_results([msg("assistant", ["a"]), msg("tool", answers="a")]) == set()
    assert open_results([msg("tool")]) == set()


def test_a_window_reaches_back_to_the_oldest_call_its_results_need():
    older = [
        msg("user", label="u0"),
        msg("assistant", ["c0"], label="a0"),
        msg("tool", answers="c0", label="r0"),
        msg("assistant", ["c1", "c2"], label="a1"),
        msg("tool", answers="c1", label="r1"),
    ]
    window = [msg("tool", answers="c2", label="r2"), msg("user", label="u1")]

    assert labels(widen_to_calls(window, older)) == ["a1", "r1", "r2", "u1"]
    assert labels(widen_to_calls(window[1:], older)) == ["u1"]


def test_a_reused_id_pairs_with_the_newest_call_before_the_result():
    older = [
        msg("assistant", ["call_0"], label="a0"),
        msg("tool", answers="call_0", label="r0"),
        msg("user", label="u"),
        msg("assistant", ["call_0"], label="a1"),
    ]
    window = [msg("tool", answers="call_0", label="r1")]

    assert labels(widen_to_calls(window, older)) == ["a1", "r1"]


def test_results_of_a_call_that_is_not_there_stay_as_they_are():
    older = [msg("user", label="u0"), msg("assistant", ["c1"], label="a1")]
    window = [msg("tool", answers="gone", label="x"), msg("tool", answers="c1", label="r1")]

    # c1's call is reached; the result of a call never stored cannot be paired.
    assert labels(widen_to_calls(window, older)) == ["a1", "x", "r1"]
    assert labels(widen_to_calls(window[:1], older)) == ["x"]


def test_reaching_back_takes_the_results_of_still_older_calls():
    older = [
        msg("assistant", ["c0"], label="a0"),
        msg("assistant", ["c1"], label="a1"),
        msg("tool", answers="c0", label="r0"),
    ]
    window = [msg("tool", answers="c1", label="r1")]

    assert labels(widen_to_calls(window, older)) == ["a0", "a1", "r0", "r1"]
