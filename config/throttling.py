"""Rate limits: API requests, failed token authentications and failed logins.

Rates are ``"<count>/<s|min|hour|day>"`` strings in ``settings.GRADED_THROTTLE_RATES``
(each overridable by an environment variable, see ``config/settings/base.py``); they are
read on every request, so ``override_settings`` works in tests. Counters live in Django's
default cache: per process with the default local-memory cache, shared between workers
when ``CACHE_URL`` points at Redis. An exceeded limit answers 429 with ``Retry-After``.

Counting is atomic (:func:`config.cache.hit`: one Lua script on Redis, a lock locally), and
a sign-in reserves its slot in every counter *before* the password is checked: of any
number of concurrent attempts, exactly as many as the limit allow are checked. While Redis
is unreachable the counters fall back to this process's memory (:mod:`config.cache`), so
sign-ins and the API keep working under per-process limits.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core import signing
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from config import cache as counting

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
    """Return the client's address, trusting ``settings.GRADED_TRUSTED_PROXIES`` proxies.

    With no trusted proxy (the default) it is ``REMOTE_ADDR`` and ``X-Forwarded-For`` is
    ignored: a client can write anything there. Behind N proxies that each append the
    address they saw, the client is the N-th entry from the right of that header; a
    missing or malformed entry falls back to ``REMOTE_ADDR``.
    """
    remote = request.META.get("REMOTE_ADDR") or "unknown"
    trusted = int(getattr(settings, "GRADED_TRUSTED_PROXIES", 0) or 0)
    if trusted <= 0:
        return remote
    hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [h for h in hops if h]
    if len(hops) < trusted:
        return remote
    candidate = hops[-trusted]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


class FailureCounter:
    """Count failures under a key in a fixed window; block once the rate is used up.

    The window starts at the first failure and lasts the rate's period. Every change is
    one atomic step of the cache (:mod:`config.cache`), so concurrent attempts cannot
    overshoot the limit.
    """

    def __init__(self, scope: str, ident: str) -> None:
        """Count failures of ``scope`` for ``ident`` (hashed into the cache key)."""
        self.scope = scope
        digest = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        self.key = f"graded-throttle:{scope}:{digest}"

    def wait(self) -> int | None:
        """Return the seconds until another attempt is allowed, or ``None`` if allowed now."""
        parsed = parse_rate(_rate(self.scope))
        if parsed is None:
            return None
        limit, _ = parsed
        count, left = counting.count(cache, self.key)
        if count >= limit and left > 0:
            return max(1, int(left + 0.999))
        return None

    def reserve(self) -> int | None:
        """Take one slot of the limit before an attempt; return the wait if none is left.

        A refused attempt gives its slot straight back, so the count stays at the limit and
        at most ``limit`` attempts hold a slot in one window, however many run at once.
        """
        parsed = parse_rate(_rate(self.scope))
        if parsed is None:
            return None
        limit, period = parsed
        count, left = counting.hit(cache, self.key, period)
        if count > limit:
            counting.release(cache, self.key)
            return max(1, int(left + 0.999))
        return None

    def add(self) -> None:
        """Record one failure."""
        parsed = parse_rate(_rate(self.scope))
        if parsed is not None:
            counting.hit(cache, self.key, parsed[1])

    def release(self) -> None:
        """Give back a slot taken by :meth:`reserve` (the attempt was not a failure)."""
        if parse_rate(_rate(self.scope)) is not None:
            counting.release(cache, self.key)

    def reset(self) -> None:
        """Forget the failures (after a success)."""
        cache.delete(self.key)


class SettingsRateThrottle(SimpleRateThrottle):
    """A DRF rate throttle whose rate is read from settings on every request.

    Requests are counted in a fixed window with the cache's atomic increment
    (:func:`config.cache.hit`), so concurrent requests cannot overshoot the rate, and a
    cache that is down degrades to per-process counting instead of failing the request.
    """

    def __init__(self) -> None:
        """Skip DRF's class-level rate lookup (it is read in :meth:`get_rate`)."""
        self.rate = self.get_rate()
        self.num_requests, self.duration = parse_rate(self.rate) or (None, None)
        self.left = 0.0

    def get_rate(self) -> str | None:
        """Return the configured rate of this scope."""
        return _rate(self.scope)

    def allow_request(self, request: Request, view: Any) -> bool:
        """Count this request; return whether it is within the rate."""
        if self.num_requests is None or self.duration is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        count, self.left = counting.hit(cache, self.key, self.duration)
        return count <= self.num_requests

    def wait(self) -> float | None:
        """Return the seconds until the window ends."""
        return max(1.0, self.left)


class AnonApiThrottle(SettingsRateThrottle):
    """Limit anonymous API requests per client address (scope ``anon``)."""

    scope = "anon"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        """Throttle only unauthenticated requests, by address."""
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


class UserApiThrottle(SettingsRateThrottle):
    """Limit API requests per signed-in user (scope ``user``)."""

    scope = "user"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        """Throttle authenticated requests by user id."""
        if not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class ThrottledTokenAuthentication(TokenAuthentication):
    """Token authentication that slows down guessing without locking out real clients.

    A valid token is always accepted: tokens are long random secrets, so checking one
    gives a guesser nothing. Failed tokens are counted per client address; once
    ``GRADED_THROTTLE_RATES["token_failure"]`` is used up, further *failed* attempts from
    that address get 429 with ``Retry-After`` until the window ends.
    """

    def authenticate(self, request: Request) -> Any:
        """Authenticate; on failure count it, and answer 429 once the address is over."""
        if self.get_header_value(request) is None:
            return None
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            # Count first, atomically: of N concurrent bad tokens exactly `limit` get a 401.
            wait = FailureCounter("token_failure", client_ip(request)).reserve()
            if wait is not None:
                raise exceptions.Throttled(wait=wait) from None
            raise

    def get_header_value(self, request: Request) -> str | None:
        """Return the ``Authorization`` header when it names this scheme, else ``None``."""
        auth = request.META.get("HTTP_AUTHORIZATION", "")
        if auth.split(" ", 1)[0].lower() != self.keyword.lower():
            return None
        return auth


# --- sign-ins -------------------------------------------------------------------------------

#: The cookie a browser gets after a successful sign-in (OWASP's "device cookie").
DEVICE_COOKIE = "graded_device"
_DEVICE_SALT = "graded.throttling.device"
_DEVICE_MAX_AGE = 365 * 86400


def _account(username: object) -> str:
    return str(username or "")[:150].strip().lower()


def device_cookie_value(username: str) -> str:
    """Return a signed device cookie binding this browser to ``username``."""
    return signing.dumps(
        {"u": _account(username), "n": secrets.token_urlsafe(12)}, salt=_DEVICE_SALT
    )


def _device_of(request: HttpRequest, account: str) -> str | None:
    """Return the nonce of the request's device cookie if it is valid for ``account``."""
    raw = request.COOKIES.get(DEVICE_COOKIE)
    if not raw:
        return None
    try:
        value = signing.loads(raw, salt=_DEVICE_SALT, max_age=_DEVICE_MAX_AGE)
    except signing.BadSignature:
        return None
    if not isinstance(value, dict) or value.get("u") != account:
        return None
    return str(value.get("n", ""))


class LoginGuard:
    """The failure counters one sign-in attempt is judged by.

    A browser holding a device cookie from an earlier successful sign-in to this account is
    judged only by the failures made with that cookie (scope ``login_device``), so nobody
    else's failures can lock its owner out. Any other client is judged per (address,
    account) (``login``), per account over all addresses (``login_account``, a distributed
    guess) and per address over all accounts (``login_ip``, a spray).
    """

    def __init__(self, request: HttpRequest, username: object) -> None:
        """Pick the counters of this attempt."""
        self.account = _account(username)
        ip = client_ip(request)
        device = _device_of(request, self.account)
        if device is not None:
            self.counters = [FailureCounter("login_device", f"{self.account}\n{device}")]
        else:
            self.counters = [
                FailureCounter("login", f"{ip}\n{self.account}"),
                FailureCounter("login_account", self.account),
                FailureCounter("login_ip", ip),
            ]

    def wait(self) -> int | None:
        """Return the seconds until this client may try again, or None."""
        waits = [w for w in (c.wait() for c in self.counters) if w is not None]
        return max(waits) if waits else None

    def reserve(self) -> int | None:
        """Take a slot in every counter before the password is checked; the wait if refused.

        The attempt counts as a failure from here on; :meth:`succeeded` gives the slots
        back. A refused attempt holds no slot.
        """
        taken: list[FailureCounter] = []
        for counter in self.counters:
            wait = counter.reserve()
            if wait is not None:
                for held in taken:
                    held.release()
                return wait
            taken.append(counter)
        return None

    def succeeded(self) -> None:
        """Give the reserved slots back, and forget this client's own failures for the account."""
        self.counters[0].reset()
        for counter in self.counters[1:]:
            counter.release()


class ThrottledModelBackend(ModelBackend):
    """Django's password backend behind :class:`LoginGuard`: every sign-in form uses it.

    The login page, the admin's login and anything else calling ``authenticate()`` with a
    request pass here, so one mechanism limits them all. A throttled attempt checks no
    password (it could not tell a right one from a wrong one anyway) and is answered 429 by
    :class:`LoginThrottleMiddleware`.
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Return the user for good credentials, unless this client is throttled."""
        if request is None:  # management commands, tests calling authenticate() bare
            return super().authenticate(request, username, password, **kwargs)
        field = get_user_model().USERNAME_FIELD
        guard = LoginGuard(request, username or kwargs.get(field))
        wait = guard.reserve()  # before the password is checked: limits hold under concurrency
        if wait is not None:
            request.graded_login_wait = wait  # type: ignore[attr-defined]
            raise PermissionDenied("Too many failed sign-ins.")
        user = super().authenticate(request, username, password, **kwargs)
        if user is not None:
            guard.succeeded()
            request.graded_device_for = guard.account  # type: ignore[attr-defined]
        return user


class LoginThrottleMiddleware:
    """Answer a throttled sign-in with 429, and give a signed-in browser its device cookie."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        """Store the next handler in the chain."""
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        """Return the view's response, or a 429 if the sign-in was throttled."""
        response = self.get_response(request)
        wait = getattr(request, "graded_login_wait", None)
        if wait is not None:
            response = HttpResponse(
                "Too many failed sign-ins. Try again later.",
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(wait)
            return response
        account = getattr(request, "graded_device_for", None)
        if account is not None and response.status_code < 400:
            response.set_cookie(
                DEVICE_COOKIE,
                device_cookie_value(account),
                max_age=_DEVICE_MAX_AGE,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response
