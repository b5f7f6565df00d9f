"""Send one query to a registered search endpoint, with retries (no Django).

Every request goes through :func:`judging.llm.egress.guarded_client`, the LLM providers'
outbound guard: the host is the endpoint's registered base URL (a configuration only adds
a path), every resolved address is checked against the operator's policy, proxies from the
environment are ignored and **redirects are never followed** (so none can leave the
registered origin). Retries reuse the LLM client's rules: 429 and 5xx, timeouts and
connection errors are retried with ``Retry-After`` or full-jitter back-off; anything else
fails at once, and a refused destination, 401/403/404 or a redirect is *fatal* (every other
query would fail the same way). The credential only ever goes into its own header, and
:func:`masked_headers` is what anyone is shown.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from judging.llm.client import backoff_delay, excerpt, is_fatal, retry_after_seconds
from judging.llm.egress import EgressRefused

AUTH_NONE, AUTH_BASIC, AUTH_API_KEY, AUTH_BEARER = "none", "basic", "api_key", "bearer"
AUTH_KINDS = (AUTH_NONE, AUTH_BASIC, AUTH_API_KEY, AUTH_BEARER)
MASK = "••••••"
#: Largest answer read, in bytes (a bigger one fails, not retried).
DEFAULT_MAX_BYTES = 5_000_000


@dataclass(frozen=True)
class Request:
    """One prepared request: method, full URL (params included), JSON body, headers."""

    method: str
    url: str
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict, repr=False)

    def shown(self) -> dict[str, Any]:
        """Return the request as it may be shown: the credential masked."""
        return {
            "method": self.method,
            "url": self.url,
            "headers": masked_headers(self.headers),
            "body": self.body,
        }


def masked_headers(headers: dict[str, str]) -> dict[str, str]:
    """Return ``headers`` with the credential's value replaced by a mask."""
    return {k: (MASK if k.lower() == "authorization" else v) for k, v in headers.items()}


def auth_header(auth: str, secret: str) -> dict[str, str]:
    """Return the header carrying ``secret`` as ``auth`` says (basic takes ``user:password``)."""
    if auth == AUTH_NONE or not secret:
        return {}
    if auth == AUTH_BASIC:
        return {"Authorization": "Basic " + base64.b64encode(secret.encode()).decode("ascii")}
    if auth == AUTH_API_KEY:
        return {"Authorization": f"ApiKey {secret}"}
    return {"Authorization": f"Bearer {secret}"}


def build_request(
    *, base_url: str, method: str, path: str, payload: Any, auth: str, secret: str, as_params: bool
) -> Request:
    """Return the request of one query: ``payload`` as the JSON body, or as URL parameters.

    ``path`` is appended to the registered base URL; it may not name another origin.
    """
    if "://" in path or path.startswith("//") or "\\" in path or "@" in path:
        raise EgressRefused("The path may not name a host; requests go to the endpoint only.")
    url = base_url.rstrip("/") + "/" + path.lstrip("/")
    headers = {"Accept": "application/json", **auth_header(auth, secret)}
    if as_params:
        params = {key: _param(value) for key, value in (payload or {}).items()}
        params.setdefault("wt", "json")
        sep = "&" if "?" in url else "?"
        return Request(method="GET", url=url + sep + urlencode(params, doseq=True), headers=headers)
    headers["Content-Type"] = "application/json"
    return Request(method=method, url=url, body=payload, headers=headers)


def _param(value: Any) -> Any:
    if isinstance(value, list):
        return [_param(v) for v in value]
    if isinstance(value, str):
        return value
    return json.dumps(value)


@dataclass(frozen=True)
class Answer:
    """A successful answer: parsed JSON, the raw text (bounded) and how it went."""

    data: Any
    raw: str
    status: int
    latency_ms: float
    attempts: int


class SearchFailed(Exception):
    """A query without an answer; ``retryable`` failures may succeed later, ``fatal`` never."""

    def __init__(
        self,
        reason: str,
        *,
        status: int | None = None,
        raw: str = "",
        attempts: int = 1,
        fatal: bool = False,
        retryable: bool = False,
    ) -> None:
        """Keep the reason, the HTTP status and an excerpt of the answer."""
        super().__init__(reason)
        self.reason, self.status, self.raw = reason, status, excerpt(raw)
        self.attempts, self.fatal, self.retryable = attempts, fatal, retryable


@dataclass(frozen=True)
class Retries:
    """How many attempts and how long to wait between them."""

    max_attempts: int = 4
    backoff_base: float = 0.5
    backoff_cap: float = 30.0


class _Transient(Exception):
    def __init__(self, reason: str, status: int | None = None, raw: str = "", wait=None) -> None:
        super().__init__(reason)
        self.reason, self.status, self.raw, self.wait = reason, status, raw, wait


async def _read(response: httpx.Response, max_bytes: int) -> bytes:
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise SearchFailed(f"The answer is over {max_bytes:,} bytes (not read further).")
        chunks.append(chunk)
    return b"".join(chunks)


async def send(
    http: httpx.AsyncClient,
    request: Request,
    *,
    timeout: float,
    retries: Retries = Retries(),
    max_bytes: int = DEFAULT_MAX_BYTES,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    rng: Callable[[], float] = random.random,
) -> Answer:
    """Send ``request``, retrying transient failures; return the parsed answer.

    Raises :class:`SearchFailed`.
    """
    attempts = max(1, retries.max_attempts)
    last: _Transient | None = None
    for attempt in range(1, attempts + 1):
        started = time.perf_counter()
        try:
            try:
                async with http.stream(
                    request.method,
                    request.url,
                    json=request.body if request.body is not None else None,
                    headers=request.headers,
                    timeout=timeout,
                ) as response:
                    status = response.status_code
                    if status == 429 or status >= 500:
                        body = (await _read(response, 64_000)).decode("utf-8", "replace")
                        raise _Transient(
                            f"HTTP {status}.",
                            status,
                            body,
                            retry_after_seconds(response.headers.get("Retry-After")),
                        )
                    if status != 200:
                        body = (await _read(response, 64_000)).decode("utf-8", "replace")
                        reason = f"HTTP {status} (not retried"
                        reason += ", redirects are not followed)." if response.is_redirect else ")."
                        raise SearchFailed(
                            reason,
                            status=status,
                            raw=body,
                            attempts=attempt,
                            fatal=is_fatal(status, ""),
                        )
                    content = await _read(response, max_bytes)
            except EgressRefused as exc:
                raise SearchFailed(str(exc), attempts=attempt, fatal=True) from None
            except httpx.InvalidURL as exc:
                raise SearchFailed(f"Refused: not a valid URL ({exc}).", fatal=True) from None
            except httpx.TimeoutException:
                raise _Transient(f"Timed out after {timeout:g} s.") from None
            except httpx.TransportError as exc:
                raise _Transient(f"Connection error ({exc.__class__.__name__}).") from None
        except _Transient as exc:
            last = exc
            if attempt == attempts:
                break
            wait = exc.wait
            if wait is None:
                wait = backoff_delay(
                    attempt, base=retries.backoff_base, cap=retries.backoff_cap, rng=rng
                )
            await sleep(wait)
            continue
        except SearchFailed as exc:
            exc.attempts = attempt
            raise
        raw = content.decode("utf-8", "replace")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise SearchFailed(
                f"The answer is not JSON ({exc}).", status=200, raw=raw, attempts=attempt
            ) from None
        return Answer(
            data=data,
            raw=raw,
            status=200,
            latency_ms=(time.perf_counter() - started) * 1000,
            attempts=attempt,
        )
    assert last is not None
    raise SearchFailed(
        f"{last.reason} Gave up after {attempts} attempt(s).",
        status=last.status,
        raw=last.raw,
        attempts=attempts,
        retryable=True,
    )


class RateLimit:
    """At most ``per_second`` request starts per second (0: unlimited), shared by tasks."""

    def __init__(self, per_second: float, clock: Callable[[], float] = time.monotonic) -> None:
        """Space request starts by ``1 / per_second`` seconds."""
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.clock, self.next = clock, 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        """Return when the next request may start."""
        if not self.interval:
            return
        async with self.lock:
            now = self.clock()
            start = max(now, self.next)
            self.next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)
