"""The wire without HTTP: parsing one message, negotiating a version, signing sessions, the Origin rule."""
from __future__ import annotations

import json

import pytest

from service.mcp import protocol
from service.mcp.protocol import Message, ProtocolError


def test_a_request_and_a_notification_are_told_apart_by_their_id():
    request = protocol.parse_message(b'{"jsonrpc": "2.0", "id": 0, "method": "ping"}')
    notification = protocol.parse_message(b'{"jsonrpc": "2.0", "method": "notifications/initialized", "params": null}')
    assert request == Message(method="ping", params={}, id=0) and request.is_request
    assert notification == Message(method="notifications/initialized", params={}) and not notification.is_request


def test_a_parse_error_carries_no_id_and_status_400():
    with pytest.raises(ProtocolError) as caught:
        protocol.parse_message(b'{"jsonrpc": "2.0", "id": 7, "method": "ping"')
    assert (caught.value.status, caught.value.code) == (400, protocol.PARSE_ERROR)
    assert caught.value.to_message() == {"jsonrpc": "2.0", "id": None,
                                         "error": {"code": -32700, "message": caught.value.message}}


def test_an_envelope_error_keeps_the_id_it_could_read():
    with pytest.raises(ProtocolError) as caught:
        protocol.parse_message(b'{"jsonrpc": "2.0", "id": "a", "method": 3}')
    assert caught.value.id == "a"


@pytest.mark.parametrize("body", [
    b'{"jsonrpc": "2.0", "method": "a", "params": {"n": 123456789012345678901234567890, "s": "\\ud800"}}',
    b'\xef\xbb\xbf{"jsonrpc": "2.0", "method": "bom"}', '{"jsonrpc": "2.0", "method": "\u00e9"}'.encode("utf-16"),
    b'{"jsonrpc": "2.0", "method": "a", "params": {"x": NaN}}', b'{"jsonrpc": "2.0", "method": "a", "x": -Infinity}',
    b'"\xff"', b"[" * 100_000 + b"]" * 100_000, b'{"jsonrpc": "2.0", "method": "a", "params": {"x": 1e400}}'])
def test_a_body_is_read_as_json_loads_reads_it(body):
    """The decoder made once reads every body as `json.loads(body, parse_constant=...)` did: the same value, or a
    parse error where that refused it (NaN and Infinity, text that is not UTF-8, UTF-16 or UTF-32, too deep)."""
    def refuse(name):
        raise ValueError(name)

    try:
        expected = protocol._message(json.loads(body, parse_constant=refuse))
    except (ValueError, RecursionError):
        with pytest.raises(ProtocolError) as caught:
            protocol.parse_message(body)
        assert caught.value.code == protocol.PARSE_ERROR
    else:
        assert protocol.parse_message(body) == expected

@pytest.mark.parametrize("requested, answered", [
    ("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-11-25"), ("", "2025-11-25")])
def test_negotiation_keeps_a_supported_version_and_offers_the_latest_otherwise(requested, answered):
    assert protocol.negotiate(requested) == answered


def test_a_session_round_trips_and_is_bound_to_the_secret():
    session_id = protocol.issue_session("secret", 3, "abcd", "2025-06-18")
    assert protocol.open_session("secret", session_id) == protocol.Session(3, "abcd", "2025-06-18")
    assert protocol.open_session("other", session_id) is None
    assert protocol.open_session("secret", session_id + "x") is None


def test_sessions_cannot_be_signed_without_a_secret():
    with pytest.raises(ProtocolError) as caught:
        protocol.issue_session("", 1, "abcd", "2025-11-25")
    assert caught.value.status == 500


@pytest.mark.parametrize("url, origin", [
    ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
    ("HTTPS://Tools.Example.com:443/mcp", "https://tools.example.com"),
    ("http://example.com:80", "http://example.com"),
    ("http://[::1]:8080", "http://[::1]:8080"),
])
def test_an_origin_is_normalised(url, origin):
    assert protocol.origin_of(url) == origin


@pytest.mark.parametrize("header, allowed", [
    (None, True),
    ("https://tools.example.com", True),
    ("https://tools.example.com:443", True),
    ("http://tools.example.com", False),
    ("https://tools.example.com.evil.example", False),
    ("null", False),
    ("https://tools.example.com:99999", False),
])
def test_only_the_services_own_origin_or_none_is_allowed(header, allowed):
    assert protocol.origin_allowed(header, "https://tools.example.com") is allowed
