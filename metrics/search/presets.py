"""Engine kinds, their default request templates and response mappings (no Django).

A mapping is a set of JMESPath expressions: ``hits`` finds the list of hits in an answer,
and the other expressions are read on each hit (``id`` and ``score``, and the fields
judges see: ``title``, ``body``, ``url``, ``image_url``). The presets are the engines'
documented answer shapes; the generic kind has no preset and must be mapped.
"""

from __future__ import annotations

from typing import Any

ELASTICSEARCH = "elasticsearch"
OPENSEARCH = "opensearch"
SOLR = "solr"
VESPA = "vespa"
GENERIC = "generic"
KINDS = (ELASTICSEARCH, OPENSEARCH, SOLR, VESPA, GENERIC)
KIND_LABELS = {
    ELASTICSEARCH: "Elasticsearch",
    OPENSEARCH: "OpenSearch",
    SOLR: "Solr",
    VESPA: "Vespa",
    GENERIC: "Generic JSON over HTTP",
}
#: The mapping's keys; ``hits`` and ``id`` are required, the others optional.
MAPPING_KEYS = ("hits", "id", "score", "title", "body", "url", "image_url")

_ES = {
    "hits": "hits.hits",
    "id": "_id",
    "score": "_score",
    "title": "_source.title",
    "body": "_source.body",
    "url": "_source.url",
    "image_url": "_source.image_url",
}
PRESET_MAPPINGS: dict[str, dict[str, str]] = {
    ELASTICSEARCH: _ES,
    OPENSEARCH: dict(_ES),
    SOLR: {
        "hits": "response.docs",
        "id": "id",
        "score": "score",
        "title": "title",
        "body": "body",
        "url": "url",
        "image_url": "image_url",
    },
    VESPA: {
        "hits": "root.children",
        "id": "id",
        "score": "relevance",
        "title": "fields.title",
        "body": "fields.body",
        "url": "fields.url",
        "image_url": "fields.image_url",
    },
}

#: Default (method, path, template) per kind; ``{{query_text}}`` etc. are placeholders.
DEFAULT_REQUESTS: dict[str, tuple[str, str, Any]] = {
    ELASTICSEARCH: (
        "POST",
        "/my-index/_search",
        {"size": "{{k}}", "query": {"match": {"body": "{{query_text}}"}}},
    ),
    OPENSEARCH: (
        "POST",
        "/my-index/_search",
        {"size": "{{k}}", "query": {"match": {"body": "{{query_text}}"}}},
    ),
    SOLR: (
        "GET",
        "/solr/my-core/select",
        {"q": "{{query_text}}", "rows": "{{k}}", "fl": "id,score,title"},
    ),
    VESPA: (
        "POST",
        "/search/",
        {
            "yql": "select * from sources * where userQuery()",
            "query": "{{query_text}}",
            "hits": "{{k}}",
        },
    ),
    GENERIC: ("POST", "/search", {"q": "{{query_text}}", "limit": "{{k}}"}),
}


def mapping_for(kind: str, overrides: dict[str, str] | None = None) -> dict[str, str]:
    """Return the preset mapping of ``kind`` with ``overrides`` (non-empty values) on top."""
    mapping = dict(PRESET_MAPPINGS.get(kind, {}))
    for key, value in (overrides or {}).items():
        if value:
            mapping[key] = value
    return mapping


def vespa_docno(value: str) -> str:
    """Return the user part of a Vespa document id (``id:ns:type::docno`` → ``docno``)."""
    if value.startswith("id:") and "::" in value:
        return value.split("::", 1)[1]
    return value
