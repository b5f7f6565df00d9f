"""A database that does not answer: 503 with ``Retry-After``, one log line per outage.

When PostgreSQL refuses connections (restarting, failing over, out of connections) every
request that reads the database used to end in Django's HTML "Server Error (500)" and a
traceback in the log, API calls included. :class:`DatabaseOutageMiddleware` turns those
into what a client can act on:

* API paths (``/api/``) answer 503 in the API's error shape,
  ``{"errors": [{"message": ..., "code": "database_unavailable"}]}``;
* pages answer 503 with a plain "temporarily unavailable" page (``templates/503.html``,
  rendered without the request: the page's usual header reads the signed-in user, which
  needs the database);
* both with ``Retry-After`` (:data:`RETRY_AFTER` seconds).

The log gets one warning when a process first meets the outage and one when a request of
that process reaches the database again (with how long it lasted and how many requests
were answered 503), not a traceback per request: Django's own "Service Unavailable" line
per response is suppressed too.

What counts as an outage (:func:`connection_lost`): an ``OperationalError`` or
``InterfaceError`` after which the connection is gone (it never opened, or the driver
marks it closed or broken). Any other database error (a constraint, a lock timeout, a
query cancelled on a live connection) is a bug or a conflict, and stays a 500 with its
traceback. Edge cases: the state is per process (each gunicorn worker logs its own
outage once); a request that never touches the database (a static file) neither starts
nor ends an outage.
"""

from __future__ import annotations

import logging
import threading
import time

from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

log = logging.getLogger("graded.outage")

#: Seconds a client is asked to wait before it tries again.
RETRY_AFTER = 10
MESSAGE = "The database is temporarily unavailable. Try again in a few seconds."
CODE = "database_unavailable"


def connection_lost(exc: BaseException, alias: str = DEFAULT_DB_ALIAS) -> bool:
    """Return whether ``exc`` means the database connection is gone (see the module)."""
    if not isinstance(exc, OperationalError | InterfaceError):
        return False
    raw = connections[alias].connection
    if raw is None:  # it never opened
        return True
    return bool(getattr(raw, "closed", False) or getattr(raw, "broken", False))


class _Outage:
    """The current outage as this process sees it: since when, and how many answers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.since: float | None = None
        self.refused = 0

    def refuse(self, exc: BaseException) -> None:
        """Count a refused request; log the outage when it is the first."""
        with self._lock:
            first = self.since is None
            if first:
                self.since = time.monotonic()
                self.refused = 0
            self.refused += 1
        if first:
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            log.warning("Database unavailable, answering 503 until it is back: %s", reason)

    def reached(self) -> None:
        """End the outage, if there is one, after a request reached the database."""
        if self.since is None:
            return
        with self._lock:
            if self.since is None:
                return
            lasted, refused = time.monotonic() - self.since, self.refused
            self.since, self.refused = None, 0
        log.warning(
            "Database available again after %.0f s; %d requests were answered 503.",
            lasted,
            refused,
        )


OUTAGE = _Outage()


def unavailable_response(request: HttpRequest) -> HttpResponse:
    """Return the 503 answer for ``request``: JSON under ``/api/``, else a plain page."""
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {"errors": [{"message": MESSAGE, "code": CODE}]}, status=503
        )
    else:
        try:
            page = render_to_string("503.html", {"retry_after": RETRY_AFTER})
        except Exception:  # e.g. a static manifest not collected: the plain words will do
            log.exception("The 503 page could not be rendered")
            page = f"{MESSAGE}\n"
            response = HttpResponse(page, status=503, content_type="text/plain; charset=utf-8")
        else:
            response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER)
    response["Cache-Control"] = "no-store"
    response._has_been_logged = True  # Django's own flag: no "Service Unavailable" line
    return response


def _reached_database(alias: str = DEFAULT_DB_ALIAS) -> bool:
    raw = connections[alias].connection
    return raw is not None and not (getattr(raw, "closed", False) or getattr(raw, "broken", False))


class DatabaseOutageMiddleware:
    """Answer 503 (``Retry-After``) instead of a 500 while the database is unreachable."""

    def __init__(self, get_response):
        """Store the next handler in the chain."""
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        """Return the response; note the end of an outage once the database answers."""
        response = self.get_response(request)
        if OUTAGE.since is not None and response.status_code != 503 and _reached_database():
            OUTAGE.reached()
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """Return the 503 answer for a lost connection; leave every other error alone."""
        if not connection_lost(exception):
            return None
        OUTAGE.refuse(exception)
        return unavailable_response(request)
