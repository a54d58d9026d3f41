"""The address table: every denied range, the IPv6 forms that embed IPv4, the operator's allow-list."""
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network

import pytest

from service.dispatch import AddressGuard, parse_allowed_networks
from service.dispatch.guard import embedded_ipv4


def teredo(server: str, client: str) -> str:
    """A Teredo address: 2001:0::/32, the server's IPv4, flags and port, the client's IPv4 inverted."""
    bits = (0x2001_0000 << 96) | (int(IPv4Address(server)) << 64) | (0x8000_63BF << 32)
    return str(IPv6Address(bits | (~int(IPv4Address(client)) & 0xFFFF_FFFF)))


DENIED_V4 = [
    ("0.0.0.0", "unspecified (this network)"),
    ("0.1.2.3", "unspecified (this network)"),
    ("10.0.0.1", "private"),
    ("10.255.255.255", "private"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("169.254.169.254", "link-local (cloud metadata lives at 169.254.169.254)"),
    ("169.254.0.1", "link-local (cloud metadata lives at 169.254.169.254)"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.0.0.8", "IETF protocol assignments"),
    ("192.0.2.1", "documentation"),
    ("192.88.99.1", "6to4 relay anycast"),
    ("192.168.1.1", "private"),
    ("198.18.0.1", "benchmarking"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
]

DENIED_V6 = [
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("64:ff9b:1::a", "local-use NAT64"),
    ("100::1", "discard-only"),
    ("2001:2::1", "benchmarking"),
    ("2001:10::1", "ORCHID"),
    ("2001:20::1", "ORCHIDv2"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("fc00::1", "unique local (private)"),
    ("fd12:3456::1", "unique local (private)"),
    ("fe80::1", "link-local"),
    ("fe80::1%1", "link-local"),
    ("fec0::1", "site-local"),
    ("ff02::1", "multicast"),
    ("4000::1", "not global unicast"),
    ("1::1", "not global unicast"),
]

EMBEDDED_DENIED = [
    ("::ffff:127.0.0.1", "loopback (embedded IPv4 127.0.0.1)"),
    ("::ffff:169.254.169.254", "link-local (cloud metadata lives at 169.254.169.254) (embedded IPv4 169.254.169.254)"),
    ("::ffff:10.0.0.1", "private (embedded IPv4 10.0.0.1)"),
    ("::ffff:0:192.168.0.1", "private (embedded IPv4 192.168.0.1)"),
    ("::127.0.0.1", "loopback (embedded IPv4 127.0.0.1)"),
    ("::0.0.0.2", "unspecified (this network) (embedded IPv4 0.0.0.2)"),
    ("64:ff9b::7f00:1", "loopback (embedded IPv4 127.0.0.1)"),
    ("64:ff9b::a9fe:a9fe", "link-local (cloud metadata lives at 169.254.169.254) (embedded IPv4 169.254.169.254)"),
    ("2002:7f00:1::1", "loopback (embedded IPv4 127.0.0.1)"),
    ("2002:a9fe:a9fe::1", "link-local (cloud metadata lives at 169.254.169.254) (embedded IPv4 169.254.169.254)"),
    (teredo("8.8.8.8", "10.1.2.3"), "private (embedded IPv4 10.1.2.3)"),
    (teredo("127.0.0.1", "8.8.4.4"), "loopback (embedded IPv4 127.0.0.1)"),
]

PUBLIC = [
    "8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
    "192.169.0.1", "2606:4700:4700::1111", "2a00:1450:4007:80e::200e", "::ffff:8.8.8.8",
    "64:ff9b::808:808", "2002:808:808::1", teredo("8.8.8.8", "8.8.4.4"),
]


@pytest.mark.parametrize("address, reason", DENIED_V4 + DENIED_V6 + EMBEDDED_DENIED)
def test_a_non_public_address_is_denied_with_its_reason(address, reason):
    guard = AddressGuard()
    assert guard.denial(address) == reason
    assert not guard.allows(address)


@pytest.mark.parametrize("address", PUBLIC)
def test_a_public_address_is_allowed(address):
    assert AddressGuard().allows(address)


@pytest.mark.parametrize("address", ["2002:7f00:1::1", "64:ff9b::7f00:1", "::127.0.0.1"])
def test_pythons_is_global_is_not_enough(address):
    # Each of these reaches loopback, yet Python calls it global: the embedded IPv4 decides here.
    assert ip_address(address).is_global
    assert not AddressGuard().allows(address)


@pytest.mark.parametrize("address", ["localhost", "", "127.1", "1.2.3.4.5", "::g", "http://8.8.8.8"])
def test_anything_that_is_not_an_ip_address_is_denied(address):
    assert AddressGuard().denial(address) == "not an IP address"


def test_embedded_ipv4_reads_every_form():
    assert embedded_ipv4(IPv6Address("::ffff:1.2.3.4")) == (IPv4Address("1.2.3.4"),)
    assert embedded_ipv4(IPv6Address("2002:102:304::")) == (IPv4Address("1.2.3.4"),)
    assert embedded_ipv4(IPv6Address(teredo("5.6.7.8", "1.2.3.4"))) == (IPv4Address("5.6.7.8"), IPv4Address("1.2.3.4"))
    assert embedded_ipv4(IPv6Address("2606:4700::1")) == ()


def test_the_allow_list_opens_exactly_its_networks():
    guard = AddressGuard(["127.0.0.0/8"])
    assert guard.allows("127.0.0.1") and guard.allows("127.9.9.9")
    assert guard.allows("::ffff:127.0.0.1")  # the same loopback, spelled in IPv6
    assert not guard.allows("::1") and not guard.allows("10.0.0.1") and not guard.allows("169.254.169.254")
    assert AddressGuard(parse_allowed_networks("::1/128")).allows("::1")


def test_allowed_networks_are_parsed_from_the_setting():
    assert parse_allowed_networks("127.0.0.0/8, ::1/128") == (ip_network("127.0.0.0/8"), ip_network("::1/128"))
    assert parse_allowed_networks("") == ()
    assert parse_allowed_networks(" 10.0.0.0/8 ,") == (ip_network("10.0.0.0/8"),)


def test_a_bad_cidr_is_named_in_the_error():
    with pytest.raises(ValueError) as bad:
        parse_allowed_networks("127.0.0.0/8, 10.0.0.1/8")
    assert "'10.0.0.1/8' is not a CIDR network" in str(bad.value)
    assert "did you mean 10.0.0.0/8?" in str(bad.value)
    with pytest.raises(ValueError, match="'intranet' is not a CIDR network"):
        parse_allowed_networks("intranet")
    with pytest.raises(ValueError, match="'10.0.0.0/33' is not a CIDR network"):
        AddressGuard(["10.0.0.0/33"])
