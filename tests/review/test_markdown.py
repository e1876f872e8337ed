"""Entries as markdown on the review pages (issue 28), and the XSS tests extended to it: the
renderer's exact output for hostile markdown (script tags, on* attributes, javascript: and
data: URLs in links and images, raw HTML blocks, entity tricks, link titles with quotes,
nested autolinks), the sanitiser alone on raw HTML, and every review page with hostile
entries parsed for anything that would run."""

import re
from html.parser import HTMLParser

import pytest
from django.utils.html import escape

from apps.entries.models import Entry
from apps.entries.services import entry_add
from apps.review.markdown import RENDER_MAX_CHARS, render_markdown, sanitize
from tests.factories import SessionFactory
from tests.lifecycle.helpers import add
from tests.review.test_crawl import _client, crawl

pytestmark = pytest.mark.django_db

REL = 'rel="noopener noreferrer nofollow"'

RENDERED = [
    # What markdown is for: headings, emphasis, code, lists, quotes, tables, links.
    ("# Title\n\nhello *world* **bold** `x`",
     "<h1>Title</h1>\n<p>hello <em>world</em> <strong>bold</strong> <code>x</code></p>\n"),
    ("3. three\n4. four", '<ol start="3">\n<li>three</li>\n<li>four</li>\n</ol>\n'),
    ("> quote\n\n---\n\nline  \nbreak",
     "<blockquote>\n<p>quote</p>\n</blockquote>\n<hr>\n<p>line<br>\nbreak</p>\n"),
    ("| a | b |\n|:-|-:|\n| 1 | 2 |",  # the alignment's style attribute is dropped
     "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n"
     "<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>\n"),
    ("~~gone~~", "<p><s>gone</s></p>\n"),
    ("[docs](https://docs.example/a?b=1&c=2)",
     f'<p><a href="https://docs.example/a?b=1&amp;c=2" {REL}>docs</a></p>\n'),
    ("[mail](mailto:a@b.example?subject=hi)",
     f'<p><a href="mailto:a@b.example?subject=hi" {REL}>mail</a></p>\n'),
    ("[up](../3/) [here](#s) [raw](?raw=1)",
     f'<p><a href="../3/" {REL}>up</a> <a href="#s" {REL}>here</a> '
     f'<a href="?raw=1" {REL}>raw</a></p>\n'),
    ("<https://a.example>", f'<p><a href="https://a.example" {REL}>https://a.example</a></p>\n'),
    # Raw HTML is text, never markup.
    ("<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"),
    ('<div onclick="alert(1)">x</div>', '<p>&lt;div onclick="alert(1)"&gt;x&lt;/div&gt;</p>\n'),
    ("<img src=x onerror=alert(1)>", "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n"),
    ("<svg onload=alert(1)>", "<p>&lt;svg onload=alert(1)&gt;</p>\n"),
    ("<iframe src=javascript:alert(1)>", "<p>&lt;iframe src=javascript:alert(1)&gt;</p>\n"),
    ("<style>p{}</style>", "<p>&lt;style&gt;p{}&lt;/style&gt;</p>\n"),
    ("<!-- <script>alert(1)</script> -->",
     "<p>&lt;!-- &lt;script&gt;alert(1)&lt;/script&gt; --&gt;</p>\n"),
    ('<a href="javascript:alert(1)">x</a>',
     '<p>&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;</p>\n'),
    ("```html\n<script>alert(1)</script>\n```",
     "<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>\n"),
    ("`<script>alert(1)</script>`", "<p><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></p>\n"),
    ("\\<script>alert(1)\\</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"),
    # Entities: decoded to text and escaped again, never to markup or a scheme.
    ("&lt;script&gt;alert(1)&lt;/script&gt;", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"),
    ("&#60;script&#62;alert(1)&#60;/script&#62;",
     "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"),
    ("&amp;lt;script&amp;gt;", "<p>&amp;lt;script&amp;gt;</p>\n"),
    # javascript:, vbscript:, file: and data: links are not links.
    ("[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>\n"),
    ("[x](JaVaScRiPt:alert(1))", "<p>[x](JaVaScRiPt:alert(1))</p>\n"),
    ("[x](&#106;avascript:alert(1))", "<p>[x](javascript:alert(1))</p>\n"),
    ("[x](&#x6A;&#x61;&#x76;&#x61;script:alert(1))", "<p>[x](javascript:alert(1))</p>\n"),
    ("[x](javascript&colon;alert(1))", "<p>[x](javascript:alert(1))</p>\n"),
    ("[x](<javascript:alert(1)>)", "<p>[x](&lt;javascript:alert(1)&gt;)</p>\n"),
    ("[x]( javascript:alert(1) )", "<p>[x]( javascript:alert(1) )</p>\n"),
    ("[x](java\nscript:alert(1))", "<p>[x](java\nscript:alert(1))</p>\n"),
    ("[x][r]\n\n[r]: javascript:alert(1)", "<p>[x][r]</p>\n<p>[r]: javascript:alert(1)</p>\n"),
    ("*[x](javascript:alert(1))*", "<p><em>[x](javascript:alert(1))</em></p>\n"),
    ("<javascript:alert(1)>", "<p>&lt;javascript:alert(1)&gt;</p>\n"),
    ("[x](vbscript:msgbox(1))", "<p>[x](vbscript:msgbox(1))</p>\n"),
    ("[x](file:///etc/passwd)", "<p>[x](file:///etc/passwd)</p>\n"),
    ("[x](data:text/html;base64,PHNjcmlwdD4=)", "<p>[x](data:text/html;base64,PHNjcmlwdD4=)</p>\n"),
    # markdown-it lets data:image through as a link: the sanitiser drops the href.
    ("[x](data:image/png;base64,AAAA)", f"<p><a {REL}>x</a></p>\n"),
    ("[x](tel:123) [y](ftp://a.example)", f"<p><a {REL}>x</a> <a {REL}>y</a></p>\n"),
    # A tab or a percent-escape in the scheme makes a relative path, not a scheme.
    ("[x](jav&#x09;ascript:alert(1))", f'<p><a href="jav%09ascript:alert(1)" {REL}>x</a></p>\n'),
    ("[x](java%73cript:alert(1))", f'<p><a href="java%73cript:alert(1)" {REL}>x</a></p>\n'),
    # Quotes cannot leave an attribute: in a URL they are escaped, in a title encoded.
    ('[x](https://a.example/"onmouseover="alert(1))',
     f'<p><a href="https://a.example/%22onmouseover=%22alert(1)" {REL}>x</a></p>\n'),
    ('[a](https://a.example "t\\" onclick=\\"alert(1)")',
     f'<p><a href="https://a.example" title="t&quot; onclick=&quot;alert(1)" {REL}>a</a></p>\n'),
    ("[a](https://a.example 'it\\'s \"q\" <script>')",
     f'<p><a href="https://a.example" title="it\'s &quot;q&quot; &lt;script&gt;" {REL}>a</a>'
     "</p>\n"),
    ('<https://a.example/"onmouseover="alert(1)>',
     f'<p><a href="https://a.example/%22onmouseover=%22alert(1)" {REL}>'
     'https://a.example/"onmouseover="alert(1)</a></p>\n'),
    ("<https://a.example/?q=<script>>", "<p>&lt;https://a.example/?q=&lt;script&gt;&gt;</p>\n"),
    # Nested autolinks and links: never a link inside a link's attributes.
    ("<<http://a.example>>",
     f'<p>&lt;<a href="http://a.example" {REL}>http://a.example</a>&gt;</p>\n'),
    ("[<http://a.example>](http://b.example)",
     f'<p><a href="http://b.example" {REL}></a><a href="http://a.example" {REL}>'
     "http://a.example</a></p>\n"),
    ("[[in](http://a.example)](http://b.example)",
     f'<p>[<a href="http://a.example" {REL}>in</a>](http://b.example)</p>\n'),
    # Images are never loaded: their alt text stands in.
    ("![a cat](https://tracker.example/pixel.png)",
     '<p><span class="md-image">[image: a cat]</span></p>\n'),
    ("![](https://tracker.example/pixel.png)", '<p><span class="md-image">[image]</span></p>\n'),
    ("![x](data:image/png;base64,AAAA)", '<p><span class="md-image">[image: x]</span></p>\n'),
    ("![x](data:image/svg+xml;base64,PHN2Zz4=)",
     "<p>![x](data:image/svg+xml;base64,PHN2Zz4=)</p>\n"),
    ("![x](javascript:alert(1))", "<p>![x](javascript:alert(1))</p>\n"),
    ("![<script>x</script> *em*](x.png)",
     '<p><span class="md-image">[image: &lt;script&gt;x&lt;/script&gt; em]</span></p>\n'),
    ("[![alt](http://img.example/x.png)](javascript:alert(1))",
     '<p>[<span class="md-image">[image: alt]</span>](javascript:alert(1))</p>\n'),
    ("[![alt](http://img.example/x.png)](http://ok.example)",
     f'<p><a href="http://ok.example" {REL}><span class="md-image">[image: alt]</span></a></p>\n'),
]  # fmt: skip


@pytest.mark.parametrize(("text", "html"), RENDERED)
def test_markdown_renders_to_exactly_this_html(text, html):
    assert render_markdown(text) == html


SANITISED = [
    # The second layer alone, on raw HTML the parser never emits.
    ('<a href="javascript:alert(1)" onclick="x()">a</a>', f"<a {REL}>a</a>"),
    ('<a href="jav&#x09;ascript:alert(1)">t</a>', f"<a {REL}>t</a>"),
    ('<a href="data:text/html,x">d</a>', f"<a {REL}>d</a>"),
    ('<a href="http://ok.example" rel="opener" target="_blank">k</a>',
     f'<a href="http://ok.example" {REL}>k</a>'),
    ('<img src="http://x.example/y.png" alt="a">', ""),
    ("<script>alert(1)</script>ok", "ok"),
    ("<svg><script>alert(1)</script></svg>", ""),
    ('<math><mi xlink:href="javascript:alert(1)">m</mi></math>', ""),
    ('<iframe src="http://x.example"></iframe>after', "after"),
    ('<form action="http://x.example"><input name=a></form>', ""),
    ("<style>p{}</style>ok", "ok"),
    ('<p style="color:red" class="x" id="y" onmouseover="alert(1)">p</p>', "<p>p</p>"),
    ('<span class="md-image evil">s</span>', '<span class="md-image">s</span>'),
    ('<noscript><p title="</noscript><img src=x onerror=alert(1)>">', '&lt;p title=""&gt;'),
]  # fmt: skip


@pytest.mark.parametrize(("html", "clean"), SANITISED)
def test_the_sanitiser_keeps_only_what_markdown_makes(html, clean):
    assert sanitize(html) == clean


def test_text_past_the_limit_comes_back_as_stored_unparsed():
    text = "<script>alert(1)</script> *x*\n" * (RENDER_MAX_CHARS // 30 + 1)

    html = render_markdown(text)

    assert len(text) > RENDER_MAX_CHARS
    assert html == (
        '<pre class="entry-content">'
        + "&lt;script&gt;alert(1)&lt;/script&gt; *x*\n" * (RENDER_MAX_CHARS // 30 + 1)
        + "</pre>"
    )


# -- the pages --------------------------------------------------------------------------------

MARK = "XSS-MARK"  # in every hostile payload below, so a page that shows one is known
HOSTILE = [
    f"<script>alert('{MARK}')</script>",
    f"<img src=x onerror=alert('{MARK}')>",
    f"<div onmouseover=\"alert('{MARK}')\">hover</div>",
    f"<iframe src=\"javascript:alert('{MARK}')\"></iframe>",
    f"<svg onload=alert('{MARK}')>",
    f"<style>body{{background:url(javascript:alert('{MARK}'))}}</style>",
    f"[click](javascript:alert('{MARK}'))",
    f"[click](JAVASCRIPT:alert('{MARK}'))",
    f"[click](&#106;avascript:alert('{MARK}'))",
    f"[click](data:text/html,<script>alert('{MARK}')</script>)",
    f"![{MARK}](javascript:alert('{MARK}'))",
    f"![{MARK}](https://tracker.example/pixel.png?{MARK})",
    f"<a href=\"javascript:alert('{MARK}')\">x</a>",
    f'[x](https://ok.example "\\" onmouseover=\\"alert(\'{MARK}\')")',
    f"<javascript:alert('{MARK}')>",
    f"[<http://a.example/{MARK}>](javascript:alert('{MARK}'))",
    f"&lt;script&gt;alert('{MARK}')&lt;/script&gt;",
    f"```\n<script>alert('{MARK}')</script>\n```",
    f"[ref]\n\n[ref]: javascript:alert('{MARK}')",
]
HOSTILE_TEXT = "\n\n".join(HOSTILE)
HOSTILE_NAME = f"notes/<img src=x onerror=alert('{MARK}')>.md"
HOSTILE_USER = f"<script>alert('{MARK}')</script>"
# The pages' own: htmx, and the erasure page's confirmation.
OWN_SCRIPT_SRC = re.compile(r"^/static/django_htmx/htmx(-\d+)?(\.min)?\.js$")
OWN_HANDLERS = {("form", "onsubmit", "return confirm('Erase every row of this user, for good?')")}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "poster"}
EMBEDDING = {"iframe", "frame", "frameset", "object", "embed", "applet", "img", "base", "math"}


class _Executable(HTMLParser):
    """What in a page could run or load: scripts not the page's own, on* handlers, URLs
    with a script or data scheme, and embedding tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self._in_script = True
            if not OWN_SCRIPT_SRC.match(a.get("src") or ""):
                self.found.append(f"<script src={a.get('src')!r}>")
        if tag in EMBEDDING:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") and (tag, name, value) not in OWN_HANDLERS:
                self.found.append(f"<{tag} {name}={value!r}>")
            # Browsers drop whitespace and control characters before reading a scheme.
            url = re.sub(r"[\x00-\x20]", "", value or "").lower()
            if name in URL_ATTRIBUTES and url.startswith(("javascript:", "vbscript:", "data:")):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name == "srcdoc":
                self.found.append(f"<{tag} srcdoc>")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.found.append(f"inline script {data[:40]!r}")


def executable(html: str) -> list[str]:
    parser = _Executable()
    parser.feed(html)
    parser.close()
    return parser.found


@pytest.mark.parametrize(
    ("html", "found"),
    [
        ("<script>alert(1)</script>", ["<script src=None>", "inline script 'alert(1)'"]),
        ('<script src="https://cdn.example/x.js"></script>',
         ["<script src='https://cdn.example/x.js'>"]),
        ('<p onclick="x()">p</p>', ["<p onclick='x()'>"]),
        ('<a href=" JaVa\tScRiPt:alert(1)">a</a>', ["<a href=' JaVa\\tScRiPt:alert(1)'>"]),
        ('<a href="data:text/html,x">a</a>', ["<a href='data:text/html,x'>"]),
        ('<img src="x.png">', ["<img>"]),
        ('<iframe srcdoc="x"></iframe>', ["<iframe>", "<iframe srcdoc>"]),
        ('<script src="/static/django_htmx/htmx-2.min.js"></script><a href="/x">x</a>', []),
    ],
)  # fmt: skip
def test_the_check_finds_what_would_run(html, found):
    assert executable(html) == found


@pytest.fixture
def hostile(api, agent):
    """A hostile note, two more under a hostile name (a hostile user's, and mallory's, whose
    page lists it), and the two archives of a session whose messages are the payloads: its
    compaction's and its reset's."""
    note = {"name": "notes/hostile.md", "content": HOSTILE_TEXT}
    assert api.post("/entries", note).status_code == 201
    entry_add(agent=agent, name=HOSTILE_NAME, content=HOSTILE_TEXT, owner=HOSTILE_USER)
    entry_add(agent=agent, name=HOSTILE_NAME, content=HOSTILE_TEXT, owner="mallory")
    session = SessionFactory(agent=agent, key="hostile")
    add(session, *HOSTILE, role=None)
    assert api.post(f"/sessions/{session.pk}/compact").status_code == 200
    assert api.post(f"/sessions/{session.pk}/reset").json()["archive"] == "archive/hostile/2"
    return session


def test_a_hostile_entry_renders_nothing_that_runs_rendered_or_raw(viewer_client, agent, hostile):
    entry = Entry.objects.get(agent=agent, name="notes/hostile.md")
    page = f"/review/agents/alice-bot/entries/{entry.pk}/"

    rendered = viewer_client.get(page).content.decode()
    raw = viewer_client.get(page, {"raw": "1"}).content.decode()

    assert executable(rendered) == []
    assert executable(raw) == []
    body = rendered.split('<div class="markdown">', 1)[1].split("</div>", 1)[0]
    assert body == render_markdown(HOSTILE_TEXT)
    assert f'<span class="md-image">[image: {MARK}]</span>' in body
    assert "tracker.example" not in body  # the image is not loaded, nor its address linked
    assert f'<pre class="entry-content">{escape(HOSTILE_TEXT)}</pre>' in raw


def test_every_review_page_with_hostile_entries_holds_nothing_that_runs(editor, agent, hostile):
    """Wherever entries show (the entry pages, rendered and raw, the entries list, the user
    pages, the timeline that links the archives), from a crawl of every review page."""
    done = crawl(_client(editor))

    pages = [p for p, status in done.statuses.items() if status == 200]
    client = _client(editor)
    found = {p: executable(client.get(p).content.decode()) for p in pages}
    assert {p: f for p, f in found.items() if f} == {}
    entries = Entry.objects.filter(agent=agent).values_list("pk", flat=True)
    for pk in entries:
        assert f"/review/agents/alice-bot/entries/{pk}/" in pages
        assert f"/review/agents/alice-bot/entries/{pk}/?raw=1" in pages
    assert f"/review/agents/alice-bot/sessions/{hostile.pk}/" in pages
    assert "/review/agents/alice-bot/users/mallory/" in pages  # lists the hostile name


def test_raw_is_the_text_as_stored_and_any_other_value_renders(viewer_client, api, agent):
    api.post("/entries", {"name": "notes/plan.md", "content": "# Plan\n\n*soon*"})
    entry = Entry.objects.get(agent=agent, name="notes/plan.md")
    page = f"/review/agents/alice-bot/entries/{entry.pk}/"

    raw = viewer_client.get(page, {"raw": "1"}).content.decode()
    other = viewer_client.get(page, {"raw": "yes"}).content.decode()

    assert '<pre class="entry-content"># Plan\n\n*soon*</pre>' in raw
    assert '<a href="?">Rendered</a> · <strong>As stored</strong>' in raw
    assert '<div class="markdown"><h1>Plan</h1>\n<p><em>soon</em></p>\n</div>' in other
    assert "<strong>Rendered</strong> · " in other


def test_an_entry_too_long_to_render_shows_as_stored(viewer_client, agent):
    text = "*x* " * (RENDER_MAX_CHARS // 4 + 1)
    entry = entry_add(agent=agent, name="archive/long/1", content=text, kind="archive")

    html = viewer_client.get(f"/review/agents/alice-bot/entries/{entry.pk}/").content.decode()

    assert f'<pre class="entry-content">{text}</pre>' in html
    assert "As stored: too long to render as markdown." in html
    assert '<div class="markdown">' not in html
