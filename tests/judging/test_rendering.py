"""Document bodies and guidelines are sanitised; highlighting only touches text."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.utils.safestring import SafeString

from judging.rendering import highlight, query_terms, render_body, render_guidelines


class _Collect(HTMLParser):
    """Collect tags and attributes of rendered HTML to assert on structure, not strings."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend((tag, k, v) for k, v in attrs)
        if tag not in {"br", "hr", "img", "wbr"}:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}>")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> _Collect:
    parser = _Collect()
    parser.feed(html)
    parser.close()
    assert not parser.errors and not parser.stack, (parser.errors, parser.stack, html)
    return parser


HOSTILE = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    '<a href="javascript:alert(1)">click</a>',
    '<a href="JaVaScRiPt:alert(1)">click</a>',
    '<a href=" javascript:alert(1)">click</a>',
    '<iframe src="https://evil.example/"></iframe>',
    '<p onclick="alert(1)" onmouseover="alert(2)">hover</p>',
    "<svg onload=alert(1)><circle/></svg>",
    "<style>body{display:none}</style>",
    '<object data="x.swf"></object><embed src="x.swf">',
    '<form action="https://evil.example"><input name=x></form>',
    '<div style="background:url(javascript:alert(1))">styled</div>',
    "<math><mi xlink:href='javascript:alert(1)'>m</mi></math>",
    "<<script>script>alert(1)<</script>/script>",
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data</a>',
]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_markup_is_neutralised(hostile):
    html = render_body(f"<p>safe words</p>{hostile}", "safe words alert")
    parsed = parse(html)
    assert not {"script", "img", "iframe", "svg", "style", "object", "embed", "form", "input"} & {
        *parsed.tags
    }
    for _tag, name, value in parsed.attrs:
        assert not name.startswith("on")
        assert name != "style"
        assert "javascript" not in (value or "").lower()
        assert not (value or "").lower().startswith("data:")
    assert "<script" not in html.lower()


def test_script_content_is_dropped_not_shown():
    html = render_body("<p>before</p><script>window.__pwned=1</script><p>after</p>", "")
    assert "__pwned" not in html
    assert "before" in html and "after" in html


def test_links_get_rel_and_only_absolute_safe_schemes():
    html = render_body(
        '<p><a href="https://example.org/a?b=1&c=2">ok</a> <a href="/admin/">local</a></p>', ""
    )
    parsed = parse(html)
    links = [(k, v) for tag, k, v in parsed.attrs if tag == "a"]
    assert ("href", "https://example.org/a?b=1&c=2") in links
    assert ("rel", "noopener noreferrer nofollow") in links
    assert ("href", "/admin/") not in links


def test_highlights_terms_in_text_only():
    body = (
        '<p title="climate change">Climate <b>change</b> and the climate.</p>'
        '<a href="https://example.org/climate" title="climate">about climate</a>'
    )
    html = render_body(body, "Climate change")
    parsed = parse(html)
    # Attributes are untouched.
    assert ("a", "href", "https://example.org/climate") in parsed.attrs
    assert ("a", "title", "climate") in parsed.attrs
    assert ("p", "title", "climate change") in parsed.attrs
    assert parsed.tags.count("mark") == 4
    assert "<mark>Climate</mark>" in html and "<b><mark>change</mark></b>" in html
    assert 'title="<mark>' not in html and 'href="https://example.org/<mark>' not in html


def test_highlight_matches_whole_words_case_insensitively():
    html = render_body("Cats and concatenate; CATS! cats'", "cats")
    assert html.count("<mark>") == 3
    assert "con<mark>" not in html


def test_highlight_skips_stopwords_and_one_letter_terms():
    assert query_terms("The a b of Rust i/o") == ["rust"]
    assert query_terms("deep learning GPUs learning") == ["learning", "deep", "gpus"]
    html = render_body("The cat is a Rust fan of b.", "the a b of rust")
    assert html.count("<mark>") == 1 and "<mark>Rust</mark>" in html


def test_terms_are_escaped_in_patterns_and_output():
    # Regex metacharacters and markup in the query cannot break anything.
    html = render_body("c++ (and) <b>x</b> plus [brackets] .*", "c++ .* <b> [brackets] (and)")
    parse(html)
    html = render_body("5 < 6 and b > a", "script <script>alert(1)</script>")
    assert "<script" not in html


def test_highlighting_cannot_inject_into_entities():
    # Query terms that occur inside escaped entities must not split them.
    html = render_body("<p>AT&amp;T &lt;amp&gt; lt gt</p>", "amp lt gt")
    parsed = parse(html)
    assert "".join(parsed.text) == "AT&T <amp> lt gt"
    assert "&<mark>" not in html


def test_plain_text_is_escaped_and_keeps_paragraphs():
    body = "First line\nsecond line & more\n\n\nSecond paragraph 1 < 2 > 0"
    html = render_body(body, "paragraph")
    assert isinstance(html, SafeString)
    assert html.count("<p>") == 2
    assert "First line<br>\nsecond line &amp; more" in html
    assert "1 &lt; 2 &gt; 0" in html
    assert "Second <mark>paragraph</mark>" in html


def test_plain_text_windows_newlines():
    html = render_body("one\r\n\r\ntwo", "")
    assert html == "<p>one</p>\n<p>two</p>"


def test_empty_body():
    assert render_body("", "x") == ""


def test_highlight_of_plain_title_escapes():
    html = highlight("<b>Climate</b> facts", "climate")
    assert html == "&lt;b&gt;<mark>Climate</mark>&lt;/b&gt; facts"


def test_guidelines_markdown_is_rendered_and_sanitised():
    text = (
        "# Grading\n\n* **Relevant**: on topic\n* [see](https://example.org)\n\n"
        "<script>alert(1)</script>\n\n[bad](javascript:alert(1))\n\n"
        '<img src=x onerror="alert(1)">\n\n| a | b |\n|---|---|\n| 1 | 2 |\n'
    )
    html = render_guidelines(text)
    parsed = parse(html)
    assert "h1" in parsed.tags and "strong" in parsed.tags and "table" in parsed.tags
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not any(re.match(r"on", name) for _t, name, _v in parsed.attrs)
    assert ("a", "href", "https://example.org") in parsed.attrs
    assert "javascript" not in html.lower()


def test_highlight_matches_simple_inflections():
    html = render_body("One floor, two Floors; floored and flooring. Flo and floorboard.", "floor")
    assert html.count("<mark>") == 4
    assert "<mark>Floors</mark>" in html and " Flo and floorboard." in html
    html = render_body("a floor plan and floors plans", "floors plans")
    assert html.count("<mark>") == 4
    html = render_body("Big city, many cities; citizen.", "cities")
    assert html.count("<mark>") == 2 and "citizen" in html
    html = render_body("changes changed changing change exchange", "changes")
    assert html.count("<mark>") == 4 and "ex<mark>" not in html
    assert (
        "class" in render_body("class classes", "class")
        and render_body("class classes", "class").count("<mark>") == 2
    )


def test_highlight_skips_vs_and_other_stopwords():
    assert query_terms("BM25 vs dense retrieval, versus SPLADE etc") == [
        "retrieval",
        "splade",
        "dense",
        "bm25",
    ]
    html = render_body("BM25 vs. dense", "bm25 vs dense")
    assert "<mark>vs</mark>" not in html and html.count("<mark>") == 2
