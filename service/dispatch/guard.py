"""Which IP addresses the platform may connect to on a tool's behalf.

A tool's URL is typed by a tenant, so an address is denied unless it is a public unicast address
or sits inside a network the operator allowed explicitly (TOOLGATE_ALLOWED_NETWORKS). The tables
are written out rather than read from Python's `is_global`/`is_private`, whose answers have changed
between releases and which do not look inside IPv6 forms that carry an IPv4 address: those are
judged by the IPv4 address they embed. Anything unparseable is denied (fail closed).
"""
from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Iterable, Union

Network = Union[IPv4Network, IPv6Network]

_DENIED_V4: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(cidr), reason)
    for cidr, reason in (
        ("0.0.0.0/8", "unspecified (this network)"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local (cloud metadata lives at 169.254.169.254)"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
    )
)

_DENIED_V6: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(cidr), reason)
    for cidr, reason in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001:2::/48", "benchmarking"),
        ("2001:10::/28", "ORCHID"),
        ("2001:20::/28", "ORCHIDv2"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("fc00::/7", "unique local (private)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
)

#: Everything outside global unicast is denied, which also covers ranges not yet named above.
_GLOBAL_UNICAST_V6 = IPv6Network("2000::/3")

# IPv6 forms whose last 32 bits are an IPv4 address the packets end up at.
_IPV4_IN_LOW_BITS = tuple(
    IPv6Network(cidr)
    for cidr in (
        "::ffff:0:0/96",  # IPv4-mapped
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
        "64:ff9b::/96",  # NAT64 well-known prefix
        "::/96",  # IPv4-compatible (deprecated)
    )
)
_SIX_TO_FOUR = IPv6Network("2002::/16")  # bits 16-47 are the IPv4 address
_TEREDO = IPv6Network("2001::/32")  # bits 32-63 the server, the last 32 bits the client, inverted
_LOW_32 = 0xFFFF_FFFF


def embedded_ipv4(address: IPv6Address) -> tuple[IPv4Address, ...]:
    """Every IPv4 address an IPv6 address carries (IPv4-mapped, -translated, -compatible, NAT64,
    6to4, Teredo), or () when it carries none."""
    bits = int(address)
    if any(address in network for network in _IPV4_IN_LOW_BITS):
        return (IPv4Address(bits & _LOW_32),)
    if address in _SIX_TO_FOUR:
        return (IPv4Address((bits >> 80) & _LOW_32),)
    if address in _TEREDO:
        return (IPv4Address((bits >> 64) & _LOW_32), IPv4Address(~bits & _LOW_32))
    return ()


class AddressGuard:
    """Decides whether an IP address may be connected to. Build one per process, from configuration."""

    def __init__(self, allowed_networks: Iterable[str | Network] = ()) -> None:
        self.allowed_networks: tuple[Network, ...] = tuple(
            n if isinstance(n, (IPv4Network, IPv6Network)) else _parse_network(n)
            for n in allowed_networks
        )

    def __repr__(self) -> str:
        return f"AddressGuard({[str(n) for n in self.allowed_networks]!r})"

    def allows(self, address: str) -> bool:
        """True when the platform may connect to `address` (an IP literal, as resolved)."""
        return self.denial(address) is None

    def denial(self, address: str) -> str | None:
        """Why `address` may not be connected to, or None when it may."""
        try:
            ip = ip_address(address)
        except ValueError:
            return "not an IP address"
        if self._is_allowed(ip):
            return None
        if isinstance(ip, IPv4Address):
            return _table_reason(ip, _DENIED_V4)
        reason = _table_reason(ip, _DENIED_V6[:2])  # :: and ::1 before the IPv4-compatible form
        if reason is not None:
            return reason
        embedded = embedded_ipv4(ip)
        if embedded:
            for ipv4 in embedded:
                reason = None if self._is_allowed(ipv4) else _table_reason(ipv4, _DENIED_V4)
                if reason is not None:
                    return f"{reason} (embedded IPv4 {ipv4})"
            return None
        reason = _table_reason(ip, _DENIED_V6)
        if reason is None and ip not in _GLOBAL_UNICAST_V6:
            reason = "not global unicast"
        return reason

    def _is_allowed(self, ip: IPv4Address | IPv6Address) -> bool:
        return any(ip in network for network in self.allowed_networks)


def parse_allowed_networks(text: str) -> tuple[Network, ...]:
    """Comma-separated CIDRs such as "127.0.0.0/8, ::1/128"; empty text allows nothing extra.

    Raises ValueError naming the first entry that is not a network.
    """
    return tuple(_parse_network(item.strip()) for item in text.split(",") if item.strip())


def _parse_network(text: str) -> Network:
    try:
        return ip_network(text, strict=True)
    except ValueError as exc:
        hint = ""
        try:
            hint = f"; did you mean {ip_network(text, strict=False)}?"
        except ValueError:
            pass
        raise ValueError(f"{text!r} is not a CIDR network ({exc}){hint}") from None


def _table_reason(ip: IPv4Address | IPv6Address, table: tuple[tuple[Network, str], ...]) -> str | None:
    return next((reason for network, reason in table if ip in network), None)
