"""Rate limits: API requests, failed token authentications and failed logins.

Rates are ``"<count>/<s|min|hour|day>"`` strings in ``settings.GRADED_THROTTLE_RATES``
(each overridable by an environment variable, see ``config/settings/base.py``); they are
read on every request, so ``override_settings`` works in tests. Counters live in Django's
default cache: per process with the default local-memory cache, shared between workers
when ``CACHE_URL`` points at Redis. An exceeded limit answers 429 with ``Retry-After``.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """Return ``(count, seconds)`` of a rate such as ``"10/min"``; ``None`` means no limit."""
    if not rate:
        return None
    count, period = rate.split("/")
    return int(count), _PERIODS[period.strip()[0]]


def _rate(scope: str) -> str | None:
    """Return the configured rate of ``scope``."""
    return getattr(settings, "GRADED_THROTTLE_RATES", {}).get(scope)


def client_ip(request: HttpRequest) -> str:
    """Return the client's address (``REMOTE_ADDR``; set it from the proxy in production)."""
    return request.META.get("REMOTE_ADDR") or "unknown"


class FailureCounter:
    """Count failures under a key in a fixed window; block once the rate is used up."""

    def __init__(self, scope: str, ident: str) -> None:
        """Count failures of ``scope`` for ``ident`` (hashed into the cache key)."""
        self.scope = scope
        digest = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        self.key = f"graded-throttle:{scope}:{digest}"

    def _state(self) -> tuple[int, float]:
        count, started = cache.get(self.key, (0, 0.0))
        return count, started

    def wait(self) -> int | None:
        """Return the seconds until another attempt is allowed, or ``None`` if allowed now."""
        parsed = parse_rate(_rate(self.scope))
        if parsed is None:
            return None
        limit, period = parsed
        count, started = self._state()
        remaining = started + period - time.time()
        if count >= limit and remaining > 0:
            return max(1, int(remaining + 0.999))
        return None

    def add(self) -> None:
        """Record one failure."""
        parsed = parse_rate(_rate(self.scope))
        if parsed is None:
            return
        _, period = parsed
        count, started = self._state()
        now = time.time()
        if now - started >= period:
            count, started = 0, now
        cache.set(self.key, (count + 1, started), timeout=period)

    def reset(self) -> None:
        """Forget the failures (after a success)."""
        cache.delete(self.key)


class SettingsRateThrottle(SimpleRateThrottle):
    """A DRF rate throttle whose rate is read from settings on every request."""

    def __init__(self) -> None:
        """Skip DRF's class-level rate lookup (it is read in :meth:`get_rate`)."""
        self.rate = self.get_rate()
        self.num_requests, self.duration = parse_rate(self.rate) or (None, None)

    def get_rate(self) -> str | None:
        """Return the configured rate of this scope."""
        return _rate(self.scope)


class AnonApiThrottle(SettingsRateThrottle):
    """Limit anonymous API requests per client address (scope ``anon``)."""

    scope = "anon"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        """Throttle only unauthenticated requests, by address."""
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class UserApiThrottle(SettingsRateThrottle):
    """Limit API requests per signed-in user (scope ``user``)."""

    scope = "user"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        """Throttle authenticated requests by user id."""
        if not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class ThrottledTokenAuthentication(TokenAuthentication):
    """Token authentication that slows down guessing: failures are counted per address.

    Once ``GRADED_THROTTLE_RATES["token_failure"]`` failures are reached, every token
    request from that address gets 429 with ``Retry-After`` until the window ends.
    """

    def authenticate(self, request: Request) -> Any:
        """Authenticate, counting and limiting failures by client address."""
        header = self.get_header_value(request)
        if header is None:
            return None
        counter = FailureCounter("token_failure", client_ip(request))
        wait = counter.wait()
        if wait is not None:
            raise exceptions.Throttled(wait=wait)
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            counter.add()
            raise

    def get_header_value(self, request: Request) -> str | None:
        """Return the ``Authorization`` header when it names this scheme, else ``None``."""
        auth = request.META.get("HTTP_AUTHORIZATION", "")
        if auth.split(" ", 1)[0].lower() != self.keyword.lower():
            return None
        return auth


class ThrottledLoginView(auth_views.LoginView):
    """The login form, refusing further attempts after too many failures (429).

    Failures are counted per (address, username) — scope ``login`` — and per address —
    scope ``login_ip`` — so neither one account nor many accounts can be guessed quickly.
    """

    def _counters(self) -> list[FailureCounter]:
        ip = client_ip(self.request)
        username = str(self.request.POST.get("username", ""))[:150].lower()
        return [FailureCounter("login", f"{ip}\n{username}"), FailureCounter("login_ip", ip)]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        """Refuse with 429 while throttled; otherwise check the form as usual."""
        waits = [w for w in (c.wait() for c in self._counters()) if w is not None]
        if waits:
            response = HttpResponse(
                "Too many failed sign-ins. Try again later.",
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(max(waits))
            return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: Any) -> HttpResponse:
        """Count the failure and show the form again."""
        for counter in self._counters():
            counter.add()
        return super().form_invalid(form)

    def form_valid(self, form: Any) -> HttpResponse:
        """Forget this user's failures from this address and sign in."""
        self._counters()[0].reset()
        return super().form_valid(form)
