"""Where Graded's server may send a request: the outbound-request guard (no Django).

An LLM judge's requests go only to a provider the operator registered (see
:class:`judging.llm.models.LLMProvider`); this module makes sure such a request cannot be
turned against the server's own network:

* :func:`check_base_url` accepts only ``http``/``https`` URLs with a host, no user info, no
  query or fragment.
* :class:`EgressPolicy` refuses every address that is not globally routable — loopback,
  private (RFC 1918, unique-local), link-local (cloud metadata at 169.254.169.254), shared,
  multicast, reserved, unspecified, and IPv4-mapped or -translated forms of those — unless
  the operator allowed that host name, address or network on the provider.
* :class:`GuardedBackend` resolves the host once, checks **every** address it resolves to,
  and connects to the address it checked, so a name cannot resolve to a public address for
  the check and to a private one for the connection (DNS rebinding). TLS still verifies the
  certificate of the host name (httpcore passes the name as SNI and for verification).
* :func:`guarded_client` builds the ``httpx.AsyncClient`` every provider call uses: the
  guarded backend, no proxies or netrc from the environment, no redirects followed.

Numeric host forms (``2130706433``, ``0x7f.1``, ``0177.0.0.1``) are resolved by the system
resolver exactly as the connection would be, so they are checked as the address they are.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import typing
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
DEFAULT_LIMITS = httpx.Limits()
#: Resolve ``(host, port)`` to the addresses a connection could use.
Resolver = Callable[[str, int], Awaitable[list[str]]]


class EgressRefused(Exception):
    """A request the guard will not send; the message says why (never a secret)."""


def check_base_url(url: str) -> str:
    """Return ``url`` without a trailing slash if it may be a provider's base URL.

    Raises :class:`EgressRefused` for another scheme, a missing host, user info, a query or
    a fragment.
    """
    text = (url or "").strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise EgressRefused(f"Not a valid URL ({exc}).") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise EgressRefused("Give an http:// or https:// base URL.")
    if not parts.hostname:
        raise EgressRefused("The URL has no host.")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise EgressRefused("The URL may not carry user info (user:password@); use a key.")
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise EgressRefused("The base URL may not have a query or a fragment.")
    if port == 0:
        raise EgressRefused("The URL's port must be 1–65535.")
    try:
        httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise EgressRefused(f"Not a valid URL ({exc}).") from None
    return text.rstrip("/")


def destination_problems(
    url: str, private_hosts: object, *, url_field: str = "base_url"
) -> tuple[str, dict[str, str]]:
    """Check an operator's destination: its URL and its allowed private hosts.

    Return the URL as :func:`check_base_url` normalises it (unchanged if refused) and the
    problems by field (``url_field``, ``allowed_private_hosts``). The admin forms of LLM
    providers, search endpoints and alert webhooks share it.
    """
    errors: dict[str, str] = {}
    try:
        url = check_base_url(url)
    except EgressRefused as exc:
        errors[url_field] = str(exc)
    try:
        if not isinstance(private_hosts, list):
            raise ValueError("Give a JSON list of host names, addresses or networks.")
        EgressPolicy.from_entries(private_hosts)
    except ValueError as exc:
        errors["allowed_private_hosts"] = str(exc)
    return url, errors


def _effective(address: IPAddress) -> IPAddress:
    """Return the IPv4 address an IPv6 form stands for (mapped, 6to4, NAT64…), else it."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address.teredo is not None:
            return address.teredo[1]
        if address in ipaddress.IPv6Network("64:ff9b::/96"):  # NAT64 well-known prefix
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def address_kind(address: IPAddress) -> str | None:
    """Return why ``address`` is not a public destination (e.g. ``"loopback"``), or None."""
    inner = _effective(address)
    for candidate in dict.fromkeys((inner, address)):
        # Most specific first: 169.254/16, 0/8 and 240/4 count as "private" too.
        for kind in (
            "loopback",
            "link_local",
            "unspecified",
            "multicast",
            "reserved",
            "private",
            "site_local",
        ):
            if getattr(candidate, f"is_{kind}", False):
                return kind.replace("_", "-")
        if not candidate.is_global:
            return "non-public"
    return None


@dataclass(frozen=True)
class EgressPolicy:
    """Which non-public destinations an operator allowed for one provider."""

    allowed_hosts: frozenset[str] = frozenset()
    allowed_networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_entries(cls, entries: Iterable[str]) -> EgressPolicy:
        """Build a policy from host names, addresses and networks (``10.0.0.0/8``).

        Raises ``ValueError`` naming an entry that is none of these.
        """
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = str(raw).strip().lower().strip("[]")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            if "/" in entry or not all(c.isalnum() or c in "-._" for c in entry):
                raise ValueError(f"Not a host name, address or network: {entry[:100]!r}.")
            hosts.add(entry.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def refusal(self, host: str, address: str) -> str | None:
        """Return why a connection to ``host`` at ``address`` is refused, or None."""
        if host.lower().strip("[]").rstrip(".") in self.allowed_hosts:
            return None
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return f"{host[:100]} resolved to something that is not an address."
        if any(ip in network or _effective(ip) in network for network in self.allowed_networks):
            return None
        kind = address_kind(ip)
        if kind is None:
            return None
        return (
            f"Refused: {host[:100]} resolves to a {kind} address ({ip}); the operator must "
            "allow this host on the provider to reach it."
        )


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve ``host`` with the system resolver (as a connection would)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise EgressRefused(f"Cannot resolve {host[:100]} ({exc}).") from None
    return [str(info[4][0]) for info in infos]


async def checked_address(
    host: str, port: int, policy: EgressPolicy, resolver: Resolver = system_resolver
) -> str:
    """Resolve ``host`` once and return an address to connect to, all of them checked.

    Raises :class:`EgressRefused` when any address is refused (a name that resolves to a
    public and a private address is refused as a whole).
    """
    addresses = await resolver(host, port)
    if not addresses:
        raise EgressRefused(f"Cannot resolve {host[:100]}.")
    for address in addresses:
        reason = policy.refusal(host, address)
        if reason:
            raise EgressRefused(reason)
    return addresses[0]


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses the policy accepts."""

    def __init__(self, policy: EgressPolicy, resolver: Resolver = system_resolver) -> None:
        """Check connections against ``policy``, resolving with ``resolver``."""
        self.policy, self.resolver = policy, resolver
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Resolve and check ``host``, then connect to the checked address."""
        address = await checked_address(host, port, self.policy, self.resolver)
        return await self.inner.connect_tcp(
            address,
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Refuse: a provider is never a local socket."""
        raise EgressRefused("Unix sockets are not a provider destination.")

    async def sleep(self, seconds: float) -> None:
        """Sleep as the inner backend does."""
        await self.inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over a :class:`GuardedBackend`, with no proxy."""

    def __init__(
        self,
        *,
        policy: EgressPolicy,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = DEFAULT_LIMITS,
        resolver: Resolver = system_resolver,
    ) -> None:
        """Send through a pool whose every connection the policy checked."""
        super().__init__(verify=verify, trust_env=False)
        ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(policy, resolver),
        )


def guarded_client(
    policy: EgressPolicy,
    *,
    verify: ssl.SSLContext | bool = True,
    limits: httpx.Limits = DEFAULT_LIMITS,
    resolver: Resolver = system_resolver,
) -> httpx.AsyncClient:
    """Return the client of every provider call: guarded, no proxies, no redirects."""
    return httpx.AsyncClient(
        transport=GuardedTransport(policy=policy, verify=verify, limits=limits, resolver=resolver),
        trust_env=False,
        follow_redirects=False,
    )
