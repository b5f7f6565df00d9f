"""A local search engine speaking Elasticsearch/OpenSearch, Solr, Vespa and a generic API.

It listens on 127.0.0.1 in a thread and ranks a small corpus by shared terms, answering in
each engine's documented request and response formats:

* ``POST /<index>/_search`` with a query DSL body (``size``, ``query.match.<field>``):
  ``{"hits": {"total": {...}, "hits": [{"_id", "_score", "_source"}]}}``;
* ``GET /solr/<core>/select?q=…&rows=…&wt=json``: ``{"response": {"docs": [...]}}``;
* ``POST /search/`` with ``{"yql", "query", "hits"}``: ``{"root": {"children": [...]}}``
  (Vespa ids ``id:ns:doc::<docno>``);
* ``POST /api/find`` with ``{"q", "limit"}``: ``{"data": {"items": [...]}}``.

``fault(request, n)`` may return ``(status, body, headers)`` to answer instead (429 with
``Retry-After``, 5xx, malformed JSON, redirects…) or ``"sleep"`` to stall past a timeout.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

CORPUS = {
    "d1": ("Solar power", "solar panels turn sunlight into power"),
    "d2": ("Wind power", "wind turbines make power from wind"),
    "d3": ("Coal", "coal burns and makes smoke"),
    "d4": ("Sunlight", "sunlight and solar heat"),
    "d5": ("Batteries", "batteries store power"),
}


def rank(text: str, k: int) -> list[tuple[str, float]]:
    """Rank the corpus by how many of ``text``'s words each document shares."""
    words = set(text.lower().split())
    scored = []
    for docno, (title, body) in CORPUS.items():
        overlap = len(words & set((title + " " + body).lower().split()))
        if overlap:
            scored.append((docno, float(overlap) + 1.0 / (1 + int(docno[1:]))))
    scored.sort(key=lambda item: -item[1])
    return scored[:k]


class FakeEngine:
    """The server and the requests it saw (method, path, query, headers, body)."""

    def __init__(self, fault: Callable[[dict[str, Any], int], Any] | None = None) -> None:
        """Start serving on 127.0.0.1."""
        self.fault = fault
        self.requests: list[dict[str, Any]] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._serve(None)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self._serve(json.loads(raw) if raw else None)

            def _serve(self, body: Any) -> None:
                parts = urlsplit(self.path)
                request = {
                    "method": self.command,
                    "path": parts.path,
                    "query": parse_qs(parts.query),
                    "headers": dict(self.headers),
                    "body": body,
                }
                with engine.lock:
                    n = len(engine.requests)
                    engine.requests.append(request)
                    engine.in_flight += 1
                    engine.max_in_flight = max(engine.max_in_flight, engine.in_flight)
                try:
                    out = engine.fault(request, n) if engine.fault else None
                    if out == "sleep":
                        time.sleep(1.5)
                        out = (200, "{}", {})
                    if out is None:
                        out = (200, json.dumps(engine.answer(request)), {})
                    status, text, headers = out
                    data = text.encode() if isinstance(text, str) else text
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    with engine.lock:
                        engine.in_flight -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        """Return the server's origin."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, request: dict[str, Any]) -> Any:
        """Answer as the engine the path names."""
        path, body, query = request["path"], request["body"] or {}, request["query"]
        if path.endswith("/_search"):
            match = body["query"]["match"]
            hits = rank(next(iter(match.values())), int(body.get("size", 10)))
            return {
                "took": 1,
                "hits": {
                    "total": {"value": len(hits), "relation": "eq"},
                    "max_score": hits[0][1] if hits else None,
                    "hits": [
                        {
                            "_index": path.split("/")[1],
                            "_id": d,
                            "_score": s,
                            "_source": {"title": CORPUS[d][0], "body": CORPUS[d][1]},
                        }
                        for d, s in hits
                    ],
                },
            }
        if path.endswith("/select"):
            assert query["wt"] == ["json"]
            hits = rank(query["q"][0], int(query.get("rows", ["10"])[0]))
            return {
                "responseHeader": {"status": 0, "QTime": 1},
                "response": {
                    "numFound": len(hits),
                    "start": 0,
                    "docs": [{"id": d, "score": s, "title": [CORPUS[d][0]]} for d, s in hits],
                },
            }
        if path == "/search/":
            hits = rank(body["query"], int(body.get("hits", 10)))
            return {
                "root": {
                    "id": "toplevel",
                    "relevance": 1.0,
                    "fields": {"totalCount": len(hits)},
                    "children": [
                        {
                            "id": f"id:ns:doc::{d}",
                            "relevance": s,
                            "fields": {"title": CORPUS[d][0], "body": CORPUS[d][1]},
                        }
                        for d, s in hits
                    ],
                }
            }
        hits = rank(body["q"], int(body.get("limit", 10)))
        return {
            "data": {
                "items": [
                    {
                        "doc": {"key": d},
                        "rel": s,
                        "name": CORPUS[d][0],
                        "link": f"https://x.example/{d}",
                    }
                    for d, s in hits
                ]
            }
        }

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
