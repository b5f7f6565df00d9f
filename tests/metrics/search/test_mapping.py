"""Templates fill placeholders safely; answers map to rankings with errors named by path."""

from __future__ import annotations

import json

import pytest

from metrics.search import mapping, presets
from metrics.search.mapping import QueryFields

HOSTILE = 'solar" } }, "script": {"source": "x"}, "q": {"x": "\\\\ {{k}} %SearchText%'


def test_a_hostile_query_text_stays_one_json_string():
    template = mapping.parse_template(
        '{"size": "{{k}}", "query": {"match": {"body": "{{query_text}}"}}, "id": "q-{{query_id}}"}'
    )
    body = mapping.render(template, QueryFields(query_id="7", query_text=HOSTILE), 25)
    wire = json.loads(json.dumps(body))
    assert wire == {"size": 25, "query": {"match": {"body": HOSTILE}}, "id": "q-7"}
    assert set(wire) == {"size", "query", "id"}  # nothing broke out into the DSL


def test_opensearch_search_text_and_narrative_placeholders():
    template = mapping.parse_template('{"q": "%SearchText%", "n": "{{ narrative }}"}')
    out = mapping.render(template, QueryFields("1", "wind", narrative="about wind"), 10)
    assert out == {"q": "wind", "n": "about wind"}


@pytest.mark.parametrize(
    ("text", "message"),
    [("not json", "not JSON"), ("[1]", "JSON object"), ('{"q": "{{secret}}"}', "secret")],
)
def test_bad_templates_are_refused_with_the_reason(text, message):
    with pytest.raises(mapping.TemplateError, match=message):
        mapping.parse_template(text)


def test_the_elasticsearch_preset_maps_hits_ids_scores_and_fields():
    answer = {
        "hits": {
            "hits": [
                {"_id": "d1", "_score": 2.5, "_source": {"title": "T", "body": "B"}},
                {"_id": "d2", "_score": 1},
            ]
        }
    }
    out = mapping.map_answer(
        answer, presets.mapping_for(presets.ELASTICSEARCH), kind=presets.ELASTICSEARCH, k=10
    )
    assert [(h.docno, h.score, h.title) for h in out.hits] == [("d1", 2.5, "T"), ("d2", 1.0, "")]
    assert out.errors == []


def test_vespa_ids_lose_their_namespace_and_depth_cuts():
    answer = {"root": {"children": [{"id": f"id:ns:doc::d{i}", "relevance": 1} for i in range(5)]}}
    out = mapping.map_answer(answer, presets.mapping_for(presets.VESPA), kind=presets.VESPA, k=3)
    assert [h.docno for h in out.hits] == ["d0", "d1", "d2"]


def test_every_mapping_error_is_named_by_its_path():
    answer = {
        "response": {
            "docs": [
                {"id": "a", "score": "high"},
                {"score": 1},
                "oops",
                {"id": "a", "score": 1},
                {"id": ["x"]},
            ]
        }
    }
    out = mapping.map_answer(answer, presets.mapping_for(presets.SOLR), kind=presets.SOLR, k=10)
    assert [h.docno for h in out.hits] == ["a"]
    assert out.errors == [
        "response.docs[0].score: not a number",
        "response.docs[1].id: missing",
        "response.docs[2]: not an object",
        "response.docs[3].id: a appears twice (kept once)",
        "response.docs[4].id: not a string (list)",
    ]
    missing = mapping.map_answer({}, presets.mapping_for(presets.SOLR), kind=presets.SOLR, k=10)
    assert missing.errors == ["response.docs: missing"] and missing.hits == []


def test_generic_mappings_are_jmespath_and_checked():
    rules = {"hits": "data.items", "id": "doc.key", "score": "rel", "title": "name"}
    answer = {"data": {"items": [{"doc": {"key": "x1"}, "rel": 0.5, "name": "X"}]}}
    out = mapping.map_answer(answer, rules, kind=presets.GENERIC, k=5)
    assert out.hits[0].docno == "x1" and out.hits[0].title == "X"
    problems = mapping.check_mapping({"hits": "data.[", "colour": "x"})
    assert set(problems) == {"hits", "id", "colour"}
    assert "JMESPath" in problems["hits"]
