"""Turn untrusted document bodies and coordinators' Markdown into safe HTML for judges.

Pure functions, no database access. Document bodies may be plain text or HTML from anywhere:
HTML is sanitised with nh3 (an allow-list of structural tags; no scripts, styles, images,
frames, event handlers or ``javascript:`` URLs; links get ``rel="noopener noreferrer
nofollow"``). Query terms are highlighted with ``<mark>`` afterwards, in text nodes only, so
highlighting can never create markup inside a tag or an attribute.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape
from html.parser import HTMLParser

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

#: Tags a document or the guidelines may keep; everything else is unwrapped (text stays).
ALLOWED_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "caption",
        "cite",
        "code",
        "dd",
        "del",
        "dfn",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "ins",
        "kbd",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "u",
        "ul",
        "var",
    }
)
#: Tags removed together with everything inside them.
REMOVED_WITH_CONTENT = frozenset(
    {"script", "style", "template", "iframe", "object", "embed", "noscript", "svg", "math"}
)
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "ol": {"start"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"

#: Words too common to be worth highlighting.
_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers him his how i if in into is it its itself
just me more most my no nor not of off on once only or other our ours out over own same she
should so some such than that the their theirs them then there these they this those
through to too under until up very was we were what when where which while who whom why
will with would you your yours
vs versus via etc ie eg per
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_TAG_HINT = re.compile(r"<(?:/?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>|!--)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_ABSOLUTE_URL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*):")


def _keep_absolute_links(tag: str, attribute: str, value: str) -> str | None:
    """Drop relative link targets in documents, which would point into this site."""
    if attribute == "href":
        match = _ABSOLUTE_URL.match(value)
        if match is None or match.group(1).lower() not in URL_SCHEMES:
            return None
    return value


def _sanitise(html: str, *, documents: bool) -> str:
    """Return ``html`` reduced to the allow-list (relative links dropped for documents)."""
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(REMOVED_WITH_CONTENT),
        attributes={tag: set(attrs) for tag, attrs in ALLOWED_ATTRIBUTES.items()},
        attribute_filter=_keep_absolute_links if documents else None,
        set_tag_attribute_values={"a": {"target": "_blank"}} if documents else None,
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )


def query_terms(query_text: str) -> list[str]:
    """Return the distinct lower-cased terms of a query worth highlighting.

    Stopwords and one-letter terms are skipped; longer terms come first so that a regular
    expression built from them prefers the longest match.
    """
    terms = {
        word
        for word in re.findall(r"\w+", query_text.lower())
        if len(word) > 1 and word not in STOPWORDS
    }
    return sorted(terms, key=lambda t: (-len(t), t))


_SUFFIXES = "(?:s|es|ed|ing|e|er|ers)?"


def term_alternative(term: str) -> str:
    """Return a regular expression for ``term`` and its simple English inflections.

    A light suffix rule, not a stemmer: ``floor`` matches floor, floors, floored,
    flooring; ``floors`` the same; ``city`` and ``cities`` match each other. Terms of
    three letters or fewer, and words ending in "ss", are matched as written (plus
    suffixes).
    """
    if term.isascii() and term.isalpha():
        if len(term) > 4 and term.endswith("ies"):
            return re.escape(term[:-3]) + "(?:y|ies)"
        if len(term) > 3 and term.endswith("y") and term[-2] not in "aeiou":
            return re.escape(term[:-1]) + "(?:y|ies)"
        for suffix in ("ing", "ed", "es", "s"):
            if term.endswith(suffix) and not term.endswith("ss") and len(term) - len(suffix) >= 3:
                return re.escape(term[: -len(suffix)]) + _SUFFIXES
        if len(term) > 2:
            return re.escape(term) + _SUFFIXES
    return re.escape(term)


@lru_cache(maxsize=256)
def _term_pattern(query_text: str) -> re.Pattern[str] | None:
    """Return a case-insensitive whole-word pattern matching the query's terms, if any.

    Each term also matches its simple inflections (:func:`term_alternative`).
    """
    terms = query_terms(query_text)
    if not terms:
        return None
    alternatives = "|".join(term_alternative(term) for term in terms)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def _highlight_text(text: str, pattern: re.Pattern[str] | None) -> str:
    """Escape plain ``text`` and wrap the pattern's matches in ``<mark>``."""
    if pattern is None:
        return escape(text, quote=False)
    parts: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        parts.append(escape(text[position : match.start()], quote=False))
        parts.append(f"<mark>{escape(match.group(0), quote=False)}</mark>")
        position = match.end()
    parts.append(escape(text[position:], quote=False))
    return "".join(parts)


class _TextNodeHighlighter(HTMLParser):
    """Re-emit sanitised HTML unchanged, except that text nodes get highlighted."""

    def __init__(self, pattern: re.Pattern[str] | None) -> None:
        """Start with an empty output buffer."""
        super().__init__(convert_charrefs=True)
        self.pattern = pattern
        self.out: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Copy a start tag verbatim (it comes from the sanitiser)."""
        self.out.append(self.get_starttag_text() or "")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Copy a self-closing tag verbatim."""
        self.out.append(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        """Copy an end tag."""
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        """Escape a text node and highlight the query terms in it."""
        self.out.append(_highlight_text(data, self.pattern))


def _highlight_html(html: str, pattern: re.Pattern[str] | None) -> str:
    """Highlight ``pattern`` in the text nodes of already sanitised ``html``."""
    if pattern is None:
        return html
    parser = _TextNodeHighlighter(pattern)
    parser.feed(html)
    parser.close()
    return "".join(parser.out)


def looks_like_html(body: str) -> bool:
    """Return whether ``body`` contains something that looks like an HTML tag or comment."""
    return _TAG_HINT.search(body) is not None


def _plain_text_html(body: str, pattern: re.Pattern[str] | None) -> str:
    """Return plain text as escaped paragraphs; single line breaks become ``<br>``.

    A line break stays in the text after each ``<br>`` and between paragraphs (white
    space the browser does not show), so the text of the HTML keeps the lines apart:
    evidence quoted across two lines keeps a line break between them, instead of running
    the last word of one into the first of the next (:mod:`judging.evidence`).
    """
    paragraphs = [p for p in _PARAGRAPH_BREAK.split(body.strip()) if p.strip()]
    return "\n".join(
        "<p>"
        + "<br>\n".join(_highlight_text(line, pattern) for line in paragraph.split("\n"))
        + "</p>"
        for paragraph in paragraphs
    )


def render_body(body: str, query_text: str) -> SafeString:
    """Return a document body as safe HTML with the query's terms marked.

    HTML bodies are sanitised; plain-text bodies are escaped and keep their paragraphs.
    """
    body = (body or "").replace("\r\n", "\n").replace("\r", "\n")
    pattern = _term_pattern(query_text or "")
    if looks_like_html(body):
        html = _highlight_html(_sanitise(body, documents=True), pattern)
    else:
        html = _plain_text_html(body, pattern)
    return mark_safe(html)  # sanitised or escaped above


def highlight(text: str, query_text: str) -> SafeString:
    """Return plain ``text`` (e.g. a title) escaped, with the query's terms marked."""
    return mark_safe(_highlight_text(text or "", _term_pattern(query_text or "")))


def render_guidelines(markdown_text: str) -> SafeString:
    """Return Markdown guidelines as sanitised HTML."""
    html = markdown.markdown(
        markdown_text or "", extensions=["tables", "fenced_code", "sane_lists"]
    )
    return mark_safe(_sanitise(html, documents=False))  # sanitised by nh3
