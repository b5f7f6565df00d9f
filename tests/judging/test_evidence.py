"""Evidence spans (issue 35 item 5): offsets, checks, the collection's rule and history.

Offsets are Python ``str`` indices (Unicode code points) into the document's evidence
text; every case below is worked out by hand from the document's characters.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from judging import evidence, services, services_undo
from judging.evidence import Span, checked_spans, document_text, spans_from_value
from judging.models import Judgment, JudgmentEvent
from judging.selectors import pair_ref
from judging.services import JudgmentRow, RowsRefused
from tests import factories

#: "Wave 👋 at café" — the emoji is one code point (two UTF-16 units in a browser).
EMOJI_BODY = "Wave 👋 at café.\nSecond line: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters."


def span(start: int, end: int, text: str) -> dict:
    return {"start": start, "end": end, "text": text}


# --- the evidence text ------------------------------------------------------------------


def test_plain_text_keeps_its_lines_and_counts_code_points():
    text = document_text(EMOJI_BODY)
    assert text == EMOJI_BODY  # plain text: the body itself (one paragraph, two lines)
    # W0 a1 v2 e3 _4 👋5 _6 a7 t8 _9 c10 a11 f12 é13 .14 \n15 S16
    assert text[5] == "👋" and text[10:14] == "café" and text[16:22] == "Second"
    assert text.index("𝔘") == 29 and text[29:36] == "𝔘𝔫𝔦𝔠𝔬𝔡𝔢"


def test_html_text_is_the_text_nodes_in_order():
    body = "<h2>Title &amp; more</h2>\n<p>One&nbsp;two <b>three</b></p><pre>\ncode</pre>x"
    assert document_text(body) == "Title & more\nOne\xa0two threecodex"
    # paragraphs of plain text are apart by one line break
    assert document_text("first\n\n\nsecond") == "first\nsecond"
    assert document_text("<script>alert(1)</script>ok") == "ok"
    assert document_text("") == ""


def test_spans_are_checked_and_merged_by_hand():
    text = "abcdefghij"
    merged = checked_spans(
        [Span(6, 8, "gh"), Span(0, 2, "ab"), Span(1, 4, "bcd"), Span(4, 5, "e")], text
    )
    # 0-2 and 1-4 overlap, 4-5 touches: one span 0-5; 6-8 stays apart
    assert merged == (Span(0, 5, "abcde"), Span(6, 8, "gh"))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("text", "Give a list of spans"),
        ([span(0, 2, "ab")] * 21, "At most 20 spans"),
        ([[0, 2]], "evidence[1]: must be an object"),
        ([{"start": 0, "end": 2}], "evidence[1].text: is required"),
        ([{**span(0, 2, "ab"), "x": 1}], "unknown field(s) 'x'"),
        ([span(True, 2, "ab")], "evidence[1].start: must be a whole number"),
        ([span(0, 10**400, "ab")], "evidence[1].end: a huge int is not an offset"),
        ([span(-1, 2, "abc")], "evidence[1].start: -1 is not an offset"),
        ([span(3, 3, "")], "end (3) must be after start (3)"),
        ([span(0, 2, "a\x00")], "evidence[1].text contains a NUL character"),
        ([span(0, 2, "abc")], "3 characters, but start and end say 2"),
        ([span(0, 2, "ab"), span(0, 5000, "x" * 5000)], "evidence[2]: 5000 characters"),
    ],
)
def test_bad_shapes_are_refused_naming_the_span(value, message):
    with pytest.raises(ValidationError) as caught:
        spans_from_value(value)
    assert message in caught.value.message_dict["evidence"][0]


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([Span(5, 7, "👋 ")], "evidence[1]: offsets 5–7 are beyond"),
        (
            [Span(0, 2, "ab")],
            "evidence[1].text: does not match the document at 0–2, which reads 'Wa'",
        ),
        ([Span(4, 5, " ")], "evidence[1]: holds only white space"),
        # UTF-16 offsets (as a browser counts) are off by one after the emoji
        ([Span(11, 15, "café")], "which reads 'afé.'"),
    ],
)
def test_spans_must_match_the_document(spans, message):
    text = "Wave 👋"
    if "café" in spans[0].text:
        text = document_text(EMOJI_BODY)
    with pytest.raises(ValidationError) as caught:
        checked_spans(spans, text)
    assert message in caught.value.message_dict["evidence"][0]


def test_total_evidence_is_capped():
    text = "word " * 3000
    spans = [Span(i * 2000, i * 2000 + 1999, text[i * 2000 : i * 2000 + 1999]) for i in range(6)]
    with pytest.raises(ValidationError, match="11994 characters of evidence"):
        checked_spans(spans, text)


def test_in_context_shows_the_words_around():
    text = "one two three four five"
    shown = evidence.in_context([span(8, 13, "three")], text, around=4)
    assert shown == [{"before": "…two ", "text": "three", "after": " fou…"}]
    stale = evidence.in_context([span(0, 3, "xyz")], text)
    assert stale == [{"before": "", "text": "xyz", "after": ""}]


# --- the service ------------------------------------------------------------------------


@pytest.fixture
def pair(db):
    coll = factories.collection(evidence="optional")
    q = factories.query(coll, external_id="q1")
    d = factories.document(coll, external_id="d1", body=EMOJI_BODY)
    judge = factories.human_judge(factories.user("ann"))
    return coll, q, d, judge


def test_record_keeps_spans_in_the_label_and_its_history(pair):
    _coll, q, d, judge = pair
    given = [span(29, 36, "𝔘𝔫𝔦𝔠𝔬𝔡𝔢"), span(10, 14, "café"), span(5, 6, "👋")]
    j = services.judgment_record(
        judge=judge, query=q, document=d, grade=3, evidence=given, evidence_rule=True
    )
    expected = [span(5, 6, "👋"), span(10, 14, "café"), span(29, 36, "𝔘𝔫𝔦𝔠𝔬𝔡𝔢")]
    j.refresh_from_db()
    assert j.evidence == expected
    event = JudgmentEvent.objects.get()
    assert event.after["evidence"] == expected
    # a note change keeps the spans (KEEP is the default) and records them again
    services.judgment_record(judge=judge, query=q, document=d, grade=3, note="see café")
    change = JudgmentEvent.objects.order_by("-pk").first()
    assert change.before["evidence"] == expected and change.after["evidence"] == expected
    # an empty list removes them; the label no longer carries the key
    services.judgment_record(judge=judge, query=q, document=d, grade=3, note="x", evidence=[])
    last = JudgmentEvent.objects.order_by("-pk").first()
    assert "evidence" not in last.after and last.before["evidence"] == expected
    assert Judgment.objects.get().evidence is None


def test_same_spans_again_write_nothing(pair):
    _coll, q, d, judge = pair
    given = [span(10, 14, "café")]
    services.judgment_record(judge=judge, query=q, document=d, grade=2, evidence=given)
    services.judgment_record(judge=judge, query=q, document=d, grade=2, evidence=given)
    assert JudgmentEvent.objects.count() == 1


def test_a_bad_span_writes_nothing(pair):
    _coll, q, d, judge = pair
    with pytest.raises(ValidationError) as caught:
        services.judgment_record(
            judge=judge, query=q, document=d, grade=2, evidence=[span(10, 14, "cafe")]
        )
    assert "evidence" in caught.value.message_dict
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()


def test_required_from_a_grade(pair):
    coll, q, d, judge = pair
    coll.evidence, coll.evidence_from_grade = "required", 2
    coll.save()
    # below the grade, and the statuses without a grade: no spans needed
    services.judgment_record(judge=judge, query=q, document=d, grade=1, evidence_rule=True)
    services.judgment_record(
        judge=judge, query=q, document=d, grade=None, status="later", evidence_rule=True
    )
    with pytest.raises(ValidationError) as caught:
        services.judgment_record(judge=judge, query=q, document=d, grade=2, evidence_rule=True)
    assert "Grade 2 needs evidence" in caught.value.message_dict["evidence"][0]
    assert Judgment.objects.get().status == "later"
    services.judgment_record(
        judge=judge, query=q, document=d, grade=4, evidence=[span(0, 4, "Wave")], evidence_rule=True
    )
    # without the rule (imports, LLM judges, undo) the setting does not apply
    services.judgment_record(judge=judge, query=q, document=d, grade=4, evidence=[])
    assert Judgment.objects.get().evidence is None


def test_off_refuses_spans_under_the_rule(pair):
    coll, q, d, judge = pair
    coll.evidence = "off"
    coll.save()
    with pytest.raises(ValidationError, match="takes no evidence spans"):
        services.judgment_record(
            judge=judge, query=q, document=d, grade=2, evidence=[span(0, 4, "Wave")],
            evidence_rule=True,
        )  # fmt: skip
    assert not Judgment.objects.exists()


def test_undo_brings_the_spans_back(pair):
    coll, q, d, judge = pair
    factories.pool_entry(coll, q, d)
    services.judgment_record(
        judge=judge, query=q, document=d, grade=3, evidence=[span(0, 4, "Wave")]
    )
    services.judgment_record(judge=judge, query=q, document=d, grade=1, evidence=[])
    services_undo.judgment_undo_last(judge=judge, collection=coll, actor=None)
    j = Judgment.objects.get()
    assert (j.grade, j.evidence) == (3, [span(0, 4, "Wave")])


# --- imports ----------------------------------------------------------------------------


def test_import_checks_merges_and_keeps_spans(pair):
    coll, _q, d, judge = pair
    d2 = factories.document(coll, external_id="d2", body="<p>Hello <b>world</b></p>")
    rows = [
        JudgmentRow(1, "q1", "d1", 3, evidence=(Span(10, 14, "café"), Span(12, 15, "fé."))),
        JudgmentRow(2, "q1", "d2", 2, evidence=(Span(6, 11, "world"),)),
    ]
    summary = services.judgments_import(collection=coll, judge=judge, rows=rows)
    assert summary.created == 2
    assert Judgment.objects.get(document=d).evidence == [span(10, 15, "café.")]
    assert Judgment.objects.get(document=d2).evidence == [span(6, 11, "world")]
    created = JudgmentEvent.objects.get(document=d)
    assert created.after["evidence"] == [span(10, 15, "café.")]
    # rows without evidence keep the spans; an empty tuple removes them; same -> unchanged
    again = [
        JudgmentRow(1, "q1", "d1", 3),
        JudgmentRow(2, "q1", "d2", 2, evidence=()),
    ]
    summary = services.judgments_import(collection=coll, judge=judge, rows=again)
    assert (summary.created, summary.changed, summary.unchanged) == (0, 1, 1)
    assert Judgment.objects.get(document=d).evidence == [span(10, 15, "café.")]
    assert Judgment.objects.get(document=d2).evidence is None
    removed = JudgmentEvent.objects.filter(document=d2, action="change").get()
    assert removed.before["evidence"] == [span(6, 11, "world")] and "evidence" not in removed.after
    same = [JudgmentRow(1, "q1", "d1", 3, evidence=(Span(10, 15, "café."),))]
    summary = services.judgments_import(collection=coll, judge=judge, rows=same)
    assert summary.unchanged == 1


def test_import_refuses_a_mismatch_by_line_and_writes_nothing(pair):
    coll, _q, _d, judge = pair
    rows = [
        JudgmentRow(1, "q1", "d1", 3),
        JudgmentRow(2, "q1", "d1", 3, evidence=(Span(0, 4, "Wavy"),)),
    ]
    with pytest.raises(RowsRefused) as caught:
        services.judgments_import(collection=coll, judge=judge, rows=rows)
    messages = caught.value.messages
    assert any(m.startswith("line 2: evidence[1].text: does not match") for m in messages)
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()


# --- the card, the settings page, file imports ---------------------------------------------


@pytest.fixture
def card(pair, client):
    coll, q, d, judge = pair
    entry = factories.pool_entry(coll, q, d)
    factories.member(coll, judge.user)
    client.force_login(judge.user)
    return coll, entry, client


def _post_card(client, coll, entry, **data):
    from django.urls import reverse

    return client.post(reverse("judging:judge_pair", args=[coll.slug, pair_ref(entry.pk)]), data)


def test_card_records_spans_and_shows_them_again(card):
    import json

    from django.urls import reverse

    coll, entry, client = card
    page = client.get(
        reverse("judging:judge_pair", args=[coll.slug, pair_ref(entry.pk)])
    ).content.decode()
    assert "data-evidence-panel" in page and 'name="evidence" value="[]"' in page
    given = json.dumps([span(10, 14, "café")])
    response = _post_card(client, coll, entry, grade="2", evidence=given, seconds="3")
    assert response.status_code == 303
    judgment = Judgment.objects.get()
    assert judgment.evidence == [span(10, 14, "café")]
    page = client.get(
        reverse("judging:judge_pair", args=[coll.slug, pair_ref(entry.pk)])
    ).content.decode()
    assert "&quot;text&quot;: &quot;café&quot;" in page  # the field holds the spans again
    # a card without the field (no JavaScript) keeps the spans
    assert _post_card(client, coll, entry, grade="3").status_code == 303
    assert Judgment.objects.get().evidence == [span(10, 14, "café")]


@pytest.mark.parametrize(
    ("evidence_value", "words"),
    [
        ("[{", "The spans are not readable"),
        ("[" * 100 + "]" * 100, "nested deeper"),
        ('[{"start": 0, "end": 4, "text": "Wavy"}]', "does not match the document"),
        ('{"start": 0}', "Give a list of spans"),
    ],
)
def test_card_refuses_bad_spans_inline(card, evidence_value, words):
    coll, entry, client = card
    response = _post_card(client, coll, entry, grade="2", evidence=evidence_value)
    assert response.status_code == 400
    html = response.content.decode()
    assert "<strong>Evidence:</strong>" in html and words in html
    assert not Judgment.objects.exists()


def test_card_without_evidence_when_off(card):
    from django.urls import reverse

    coll, entry, client = card
    coll.evidence = "off"
    coll.save()
    page = client.get(
        reverse("judging:judge_pair", args=[coll.slug, pair_ref(entry.pk)])
    ).content.decode()
    assert "data-evidence" not in page and 'name="evidence"' not in page


def test_settings_page_sets_the_rule(client, pair):
    coll, _q, _d, _judge = pair
    cora = factories.user("cora")
    factories.member(coll, cora, "coordinator")
    client.force_login(cora)
    url = f"/c/{coll.slug}/settings/"
    page = client.get(url + "?tab=card").content.decode()  # the judging card's tab
    assert 'name="evidence"' in page and 'name="evidence_from_grade"' in page
    form = {
        "action": "aggregation",
        "aggregation_policy": coll.aggregation_policy,
        "judges_per_pair": "1",
        "max_judges_per_pair": "0",
        "disagreement_spread": "2",
        "agreement_alert_threshold": "0.5",
        "evidence": "required",
        "evidence_from_grade": "3",
    }
    assert client.post(url, form).status_code == 303
    coll.refresh_from_db()
    assert (coll.evidence, coll.evidence_from_grade) == ("required", 3)
    response = client.post(url, {**form, "evidence": "sometimes", "evidence_from_grade": "9"})
    assert response.status_code == 400
    coll.refresh_from_db()
    assert (coll.evidence, coll.evidence_from_grade) == ("required", 3)


def test_a_jsonl_upload_carries_spans(pair):
    import json

    from judging.lists import services as list_services

    coll, _q, _d, judge = pair
    good = json.dumps(
        {"query": "q1", "document": "d1", "grade": 3, "evidence": [span(0, 4, "Wave")]}
    )
    summary = list_services.judgment_list_import(
        collection=coll, judge=judge, source=good.encode(), format="jsonl"
    )
    assert summary.created == 1 and Judgment.objects.get().evidence == [span(0, 4, "Wave")]
    bad = json.dumps({"query": "q1", "document": "d1", "grade": 3, "evidence": "Wave"})
    with pytest.raises(list_services.ImportRefused) as caught:
        list_services.judgment_list_import(
            collection=coll, judge=judge, source=bad.encode(), format="jsonl"
        )
    assert "line 1: evidence: Give a list of spans" in str(caught.value)
    assert Judgment.objects.get().evidence == [span(0, 4, "Wave")]


def test_edit_page_keeps_spans_and_applies_the_rule(card):
    from django.urls import reverse

    coll, entry, client = card
    judge = coll.memberships.get(role="judge").user.judge
    services.judgment_record(
        judge=judge, query=entry.query, document=entry.document, grade=1,
        evidence=[span(0, 4, "Wave")],
    )  # fmt: skip
    judgment = Judgment.objects.get()
    url = reverse("judging:judgment_update", args=[coll.slug, judgment.pk])
    assert client.post(url, {"status": "graded", "grade": "2", "note": "x"}).status_code == 303
    judgment.refresh_from_db()
    assert (judgment.grade, judgment.evidence) == (2, [span(0, 4, "Wave")])
    coll.evidence, coll.evidence_from_grade = "required", 2
    coll.save()
    services.judgment_record(
        judge=judge, query=entry.query, document=entry.document, grade=1, evidence=[]
    )
    response = client.post(url, {"status": "graded", "grade": "3", "note": "x"})
    assert response.status_code == 400
    assert "Grade 3 needs evidence" in response.content.decode()
    assert Judgment.objects.get().grade == 1
