"""What a user reads says what a behaviour is, not which design document it came from: the
design sources ("seed 000"-"seed 004") are named in one table only, docs/lifecycle.md's
"Design sources, rule by rule". Checked: the README, docs/, the OpenAPI schema, the MCP tool
list, the review templates and the Python client's source."""

import json
import re
from pathlib import Path

from django.conf import settings

from apps.mcp.resources import TEMPLATES
from apps.mcp.tools import TOOLS
from memoryhub.api import api

BASE = Path(settings.BASE_DIR)
SOURCES_HEADING = "## Design sources, rule by rule"
# "seed 000", "seeds 001, 004", "seed 004's", "the seeds", "the seeds' defaults"; a random
# seed (the fuzz's "fixed seed") is not a design source.
JARGON = re.compile(r"\bseeds?(?:'s?)?\s+0\d\d\b|\bthe seeds\b|\bseeds?'", re.IGNORECASE)


def jargon_in(text: str, where: str) -> list[str]:
    found = []
    for n, line in enumerate(text.splitlines(), start=1):
        if JARGON.search(line):
            found.append(f"{where}:{n}: {line.strip()[:120]}")
    return found


def outside_the_sources_table(text: str) -> str:
    """docs/lifecycle.md without its design-sources section (up to the next `## `)."""
    head, sep, rest = text.partition(SOURCES_HEADING + "\n")
    assert sep, f"docs/lifecycle.md has no '{SOURCES_HEADING}' section"
    _, sep, tail = rest.partition("\n## ")
    return head + (sep + tail if sep else "")


def test_the_sources_are_one_table_in_docs_lifecycle():
    text = (BASE / "docs" / "lifecycle.md").read_text()
    section = text.partition(SOURCES_HEADING + "\n")[2].partition("\n## ")[0]
    tables = re.findall(r"(?m)^\|[-| ]+\|$", section)  # one separator row per table
    assert len(tables) == 1
    assert not re.search(r"(?m)^#{3,} ", section)  # no sub-sections: one table
    for source in ("000", "001", "002", "003", "004"):
        assert re.search(rf"(?m)^\| {source} \|", section), source


def test_the_readme_and_docs_say_what_a_behaviour_is():
    found = jargon_in((BASE / "README.md").read_text(), "README.md")
    for path in sorted((BASE / "docs").glob("*.md")):
        text = path.read_text()
        if path.name == "lifecycle.md":
            text = outside_the_sources_table(text)
        found += jargon_in(text, f"docs/{path.name}")
    found += jargon_in((BASE / "clients" / "python" / "README.md").read_text(), "client README")
    assert found == []


def test_the_api_schema_and_the_mcp_tools_say_what_a_behaviour_is():
    schema = json.dumps(api.get_openapi_schema(), indent=1)
    found = jargon_in(schema, "openapi.json")
    tools = [tool.definition().model_dump(mode="json") for tool in TOOLS.values()]
    found += jargon_in(json.dumps(tools, indent=1), "MCP tools")
    templates = [t.model_dump(mode="json") for t in TEMPLATES]
    found += jargon_in(json.dumps(templates, indent=1), "MCP resource templates")
    assert found == []


def test_the_review_pages_and_the_client_say_what_a_behaviour_is():
    found = []
    for path in sorted((BASE / "templates").rglob("*.html")):
        found += jargon_in(path.read_text(), str(path.relative_to(BASE)))
    for path in sorted((BASE / "clients" / "python" / "src").rglob("*.py")):
        found += jargon_in(path.read_text(), str(path.relative_to(BASE)))
    assert found == []


def test_the_check_finds_a_source_named_in_plain_text():
    assert jargon_in("ok\nthe rolling summary (seed 000)\n", "x") == [
        "x:2: the rolling summary (seed 000)"
    ]
    assert jargon_in("Seeds 001-004 say so", "x") == ["x:1: Seeds 001-004 say so"]
    assert jargon_in("the seeds' defaults", "x") == ["x:1: the seeds' defaults"]
    assert jargon_in("seedling, seeded data, a fixed seed, about 6,600 cases", "x") == []
