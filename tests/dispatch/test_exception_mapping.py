"""The one place exceptions become failure kinds, clause order included."""
import http.client
import socket
import ssl

import gevent
import pytest
from geventhttpclient.response import HTTPConnectionClosed, HTTPParseError

from service.dispatch.client import AddressDenied, NameResolutionError, ResponseHeadTooLarge
from service.dispatch.transport import CallOutcome, within_deadline


def raising(exc):
    def exchange():
        raise exc
    return exchange


TIMEOUTS = [
    socket.timeout("socket"),
    TimeoutError("connect"),
]

TRANSPORT_ERRORS = [
    HTTPParseError("invalid HTTP status line"),
    HTTPConnectionClosed("connection closed before the end of the headers"),
    ResponseHeadTooLarge("status line and headers past 65536 bytes"),
    AddressDenied("internal.test may not be reached: 10.0.0.1 is private"),
    NameResolutionError("Failed to resolve 'nowhere.test'"),
    ssl.SSLError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"),
    http.client.IncompleteRead(b"partial", 900),
    ConnectionResetError("reset by peer"),
    ConnectionRefusedError("refused"),
    socket.gaierror(-2, "Name or service not known"),
    UnicodeDecodeError("utf-16", b"x", 0, 1, "UTF-16 stream does not start with BOM"),
]


def test_a_socket_timeout_is_an_os_error_too_and_counts_as_a_timeout():
    # The reason the clause order matters: an `except OSError` first would swallow it.
    assert isinstance(socket.timeout(), OSError)
    assert within_deadline(raising(socket.timeout("read")), 5).kind == "timed-out"


@pytest.mark.parametrize("exc", TIMEOUTS, ids=lambda e: type(e).__name__)
def test_timeouts_are_timed_out(exc):
    assert within_deadline(raising(exc), 5).kind == "timed-out"


@pytest.mark.parametrize("exc", TRANSPORT_ERRORS, ids=lambda e: type(e).__name__)
def test_unreachable_broken_or_cut_off_is_a_transport_error(exc):
    outcome = within_deadline(raising(exc), 5)
    assert (outcome.kind, outcome.http_code) == ("transport-error", None)
    assert outcome.detail.startswith(type(exc).__name__)


def test_the_calls_own_deadline_is_timed_out():
    outcome = within_deadline(lambda: gevent.sleep(5) or CallOutcome(None), 0.05)
    assert outcome.kind == "timed-out" and outcome.detail == "no complete answer within 0.05 s"


def test_someone_elses_deadline_is_not_silenced():
    outer = gevent.Timeout(0.05)
    outer.start()
    try:
        with pytest.raises(gevent.Timeout) as raised:
            within_deadline(lambda: gevent.sleep(5) or CallOutcome(None), 10)
        assert raised.value is outer
    finally:
        outer.close()


def test_a_bug_is_not_disguised_as_a_failure_kind():
    with pytest.raises(KeyError):
        within_deadline(raising(KeyError("oops")), 5)


def test_the_deadline_is_cancelled_after_a_quick_exchange():
    assert within_deadline(lambda: CallOutcome(None, 200, output=""), 0.05).kind is None
    gevent.sleep(0.1)  # a timer left running would fire into this greenlet here
