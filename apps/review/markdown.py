"""Entries (notes and archives) as HTML on the review pages: markdown an agent or an LLM
wrote, so hostile until proven otherwise.

Two layers. markdown-it-py parses CommonMark (plus tables and strikethrough) with raw HTML
off: a `<script>` in the text comes out as the text "<script>". Then nh3 (ammonia) keeps only
the tags and attributes markdown makes, whatever the parser let through: links to http(s),
mailto or a relative address, with rel="noopener noreferrer nofollow".

Images are never loaded: an image shows as its alt text, "[image: alt]" (the address is
left out). A remote image would tell its host who reads the entry, and when (a tracking
pixel); the alt text is what the writer meant the image to say, and the raw view keeps the
address for a reader who wants it.
"""

from collections.abc import Sequence

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

# Past this many characters the text is shown as stored: markdown-it-py parses ~1 MB/s, and
# some shapes (thousands of nested brackets) cost more; a whole-transcript archive can be MBs.
RENDER_MAX_CHARS = 200_000

_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code",
    "em", "strong", "s", "a", "ul", "ol", "li", "span",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_CLEANER = nh3.Cleaner(
    tags=_TAGS,
    clean_content_tags={"script", "style"},
    attributes={"a": {"href", "title"}, "ol": {"start"}},
    allowed_classes={"span": {"md-image"}},
    url_schemes={"http", "https", "mailto"},
    link_rel="noopener noreferrer nofollow",
    strip_comments=True,
)


def _image_as_text(
    self: object, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    alt = "".join(t.content for t in tokens[idx].children or [])
    label = f"image: {alt}" if alt else "image"
    return f'<span class="md-image">[{escape(label)}]</span>'


_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_PARSER.add_render_rule("image", _image_as_text)


def renderable(text: str) -> bool:
    """Whether render_markdown parses `text` (it is short enough), or shows it as stored."""
    return len(text) <= RENDER_MAX_CHARS


def sanitize(html: str) -> str:
    """`html` kept to the tags and attributes markdown makes: no script, style, image, frame
    or form, no on* attribute, hrefs only http(s), mailto or relative, rel on every link."""
    return _CLEANER.clean(html)


def render_markdown(text: str) -> SafeString:
    """`text` as sanitised HTML: raw HTML escaped, links only http(s)/mailto/relative with
    rel="noopener noreferrer nofollow", images as "[image: alt]", nothing executable. Text
    past RENDER_MAX_CHARS comes back escaped in a <pre>, unparsed."""
    if not renderable(text):
        return mark_safe(f'<pre class="entry-content">{escape(text)}</pre>')  # noqa: S308 - escaped
    return mark_safe(sanitize(_PARSER.render(text)))  # noqa: S308 - sanitised just now
