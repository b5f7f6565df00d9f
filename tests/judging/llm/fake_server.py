"""A local fake OpenAI-compatible Chat Completions server for the LLM judge tests.

It listens on 127.0.0.1 on a free port, answers from a script the test gives, records every
request (headers and JSON body) and the largest number of requests in flight at once.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the fake server answers to one request."""

    status: int = 200
    content: str | None = "##final score: 2"
    body: str | None = None  # raw body overriding the chat completion
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    model: str = "fake-model-2026-01"


def chat_body(content: str, model: str) -> str:
    """Return a Chat Completions JSON body with ``content``."""
    return json.dumps(
        {
            "id": "cmpl-1",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
        }
    )


class FakeLLM:
    """The server and what it saw; ``script(request_body, n)`` returns a :class:`Reply`."""

    def __init__(self, script: Callable[[dict[str, Any], int], Reply] | None = None) -> None:
        """Start serving on 127.0.0.1 in a thread."""
        self.script = script or (lambda body, n: Reply())
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                body = json.loads(raw)
                with fake.lock:
                    n = len(fake.requests)
                    fake.requests.append(
                        {
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": body,
                            "at": time.monotonic(),
                        }
                    )
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    reply = fake.script(body, n)
                    if reply.delay:
                        time.sleep(reply.delay)
                    payload = (
                        reply.body
                        if reply.body is not None
                        else chat_body(reply.content or "", reply.model)
                    ).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    with contextlib.suppress(OSError):
                        self.wfile.write(payload)
                finally:
                    with fake.lock:
                        fake.in_flight -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        """Return the base URL (the judge's ``endpoint``)."""
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
