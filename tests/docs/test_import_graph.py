"""The house's import graph (issue 40): no module of the server is in an import circle, not
even through an import inside a function or under TYPE_CHECKING, which import-linter's
layers contract does not see within one app. grimp is import-linter's own graph."""

import grimp

from tests.docs.import_cycles import import_cycles


def test_no_module_of_the_server_is_in_an_import_circle() -> None:
    graph = grimp.build_graph("apps", "memoryhub", include_external_packages=False)

    assert import_cycles(graph) == []


def test_the_check_finds_a_circle_through_an_import_inside_a_function(tmp_path, monkeypatch):
    # The check itself on a package made for it: a imports b at the top, b imports a inside a
    # function (how the search circle hid, issue 40), c imports a and is in no circle.
    package = tmp_path / "circle_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circle_probe import b\n")
    (package / "b.py").write_text("def f():\n    from circle_probe import a\n    return a\n")
    (package / "c.py").write_text("from circle_probe import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    graph = grimp.build_graph("circle_probe", include_external_packages=False, cache_dir=None)

    assert import_cycles(graph) == [["circle_probe.a", "circle_probe.b"]]
