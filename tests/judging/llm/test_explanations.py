"""An LLM judge's explanation and quoted evidence kept beside its grade (issue 35 item 5)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging import services
from judging.evidence import document_text
from judging.llm import parse, runner
from judging.llm import services as services_llm
from judging.models import Judgment, JudgmentEvent, Membership
from tests import factories
from tests.judging.llm.fake_server import Reply

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("The page answers it directly.\n##final score: 3", "The page answers it directly."),
        ("##final score: 2", ""),  # nothing but the score
        ('{"grade": 2, "reason": "Partly."}', "Partly."),
        ('```json\n{"grade": 2, "explanation": "Fenced."}\n```', "Fenced."),
        ('{"grade": 2}', ""),
        ("Bad\x00byte. final score: 1", "Badbyte."),
        ("", ""),
    ],
)
def test_explanation_of_an_answer(content, expected):
    assert parse.explanation(content) == expected


def test_explanation_is_cut_to_a_note():
    long = "word " * 2000 + "final score: 1"
    cut = parse.explanation(long, limit=100)
    assert len(cut) == 100 and cut.endswith("…")


def test_quotes_and_where_they_are():
    assert parse.quotes('{"grade": 3, "evidence": ["a b", " ", 3, "c"]}') == ["a b", "c"]
    assert parse.quotes('{"grade": 3, "quotes": "one"}') == ["one"]
    assert parse.quotes('{"grade": 3, "evidence": {"x": 1}}') == []
    assert parse.quotes("final score: 3") == []
    text = "Flights to\nHelsinki   leave hourly."
    assert parse.find_quote("to Helsinki leave", text) == (8, 27)  # t8 o9 \n10 H11…a26
    assert parse.find_quote("to Oslo", text) is None


def test_a_job_keeps_the_explanation_and_the_quoted_spans(coll, llm, fake):
    q = factories.query(coll, "q1", text="flights helsinki")
    body = "<p>Wave 👋 at the gate.</p>\n<p>Flights to <b>Helsinki</b> leave hourly.</p>"
    d = factories.document(coll, "d1", body=body)
    services.pool_add_ids(collection=coll, pairs=[(q.pk, d.pk)], source="manual")
    fake.script = lambda body, n: Reply(
        content='{"grade": 3, "reason": "It gives the timetable.", '
        '"evidence": ["Flights to Helsinki leave", "not in the page", "👋 at"]}'
    )
    llm.json_mode = True
    llm.save()
    job = runner.run_job(services_llm.llm_job_create(collection=coll, judge=llm))
    assert job.done == 1
    judgment = Judgment.objects.get(judge=llm)
    text = document_text(body)
    flights = text.index("Flights")
    assert judgment.note == "It gives the timetable."
    assert judgment.evidence == [
        {"start": 5, "end": 9, "text": "👋 at"},
        {"start": flights, "end": flights + 25, "text": "Flights to Helsinki leave"},
    ]
    event = JudgmentEvent.objects.get(judge=llm)
    assert event.after["note"] == "It gives the timetable."
    assert event.after["evidence"] == judgment.evidence

    # shown on the adjudication page and in the label's history, as an explanation
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    from django.test import Client

    client = Client()
    client.force_login(cora)
    page = client.get(reverse("judging:pair_adjudicate", args=[coll.slug, q.pk, d.pk]))
    html = page.content.decode()
    assert "<em>explanation:</em> It gives the timetable." in html
    assert '<mark class="evidence-mark">Flights to Helsinki leave</mark>' in html
    history = client.get(reverse("judging:judgment_history", args=[coll.slug, q.pk, d.pk]))
    html = history.content.decode()
    assert "Explanation:</span> It gives the timetable." in html
    assert '<mark class="evidence-mark">👋 at</mark>' in html
