"""The serving loop's handler on a real socket: the request head read strictly, each answer written at once."""
import contextlib

import gevent.pywsgi
import pytest

from service.server import MAX_HEADER_FIELDS, MAX_HEADER_LINE, make_server
from tests.support.loopback import exchange


def echo(environ, start_response):
    """Answers with the request's headers as the app saw them, one per line; `/stream` answers in three chunks."""
    if environ["PATH_INFO"] == "/stream":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return iter([b"one,", b"two,", b"three"])
    if environ["PATH_INFO"] == "/empty":
        start_response("204 No Content", [])
        return [b""]
    body = environ["wsgi.input"].read()
    seen = sorted(f"{k}={v}" for k, v in environ.items() if k.startswith("HTTP_") or k.startswith("CONTENT_"))
    answer = ("\n".join(seen) + "\nbody=" + body.decode()).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(answer)))])
    return [answer]


@contextlib.contextmanager
def serving():
    server = make_server(echo, "127.0.0.1", 0)
    server.start()
    try:
        yield server.server_port
    finally:
        server.stop(timeout=1)


def request(head: str, body: bytes = b"") -> bytes:
    return head.replace("\n", "\r\n").encode("latin-1") + b"\r\n" + body


def test_the_app_sees_every_header_and_the_body():
    with serving() as port:
        answer = exchange(port, request("POST /x HTTP/1.1\nHost: a\nX-Thing:  spaced  \nContent-Type: text/plain\n"
                                        "Content-Length: 5\nCookie: a=1\nCookie: b=2\nUnder_Score: dropped\n", b"hello"))
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    text = answer.split(b"\r\n\r\n", 1)[1].decode()
    assert "HTTP_X_THING=spaced" in text and "CONTENT_TYPE=text/plain" in text and "CONTENT_LENGTH=5" in text
    assert "HTTP_COOKIE=a=1; b=2" in text and "UNDER" not in text and text.endswith("body=hello")


@pytest.mark.parametrize("head, why", [
    ("GET / HTTP/1.1\nHost: a\nX-Folded: one\n two\n", "obs-fold"),
    ("GET / HTTP/1.1\nHost: a\nX-Space : value\n", "whitespace before the colon"),
    ("GET / HTTP/1.1\nHost: a\nno colon here\n", "not a field"),
    ("GET / HTTP/1.1\nHost: a\n: no name\n", "no name"),
    ("POST / HTTP/1.1\nHost: a\nContent-Length: 5\nContent-Length: 6\n", "two lengths"),
    ("GET / HTTP/1.1\nHost: a\n" + "X-Many: 1\n" * MAX_HEADER_FIELDS, "too many fields"),
    ("GET / HTTP/1.1\nHost: a\nX-Long: " + "a" * MAX_HEADER_LINE + "\n", "a line too long"),
])
def test_a_malformed_head_is_400_and_reaches_no_app(head, why):
    with serving() as port:
        answer = exchange(port, request(head, b"hello"))
    assert answer.startswith(b"HTTP/1.1 400 "), why
    assert b"body=" not in answer


def test_a_repeated_equal_length_is_one_length():
    with serving() as port:
        answer = exchange(port, request("POST / HTTP/1.1\nHost: a\nContent-Length: 5\nContent-Length: 5\n", b"hello"))
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b"body=hello")


def test_a_chunked_body_outranks_a_declared_length():
    # RFC 9112 §6.3: with both, the transfer coding decides where the body ends and the length is dropped.
    with serving() as port:
        answer = exchange(port, request("POST / HTTP/1.1\nHost: a\nContent-Length: 3\nTransfer-Encoding: chunked\n",
                                        b"5\r\nhello\r\n0\r\n\r\n"))
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b"body=hello")
    assert b"CONTENT_LENGTH" not in answer


def test_a_field_given_twice_is_read_by_its_first_value_in_any_case():
    with serving() as port:
        # the first Connection says close: no second answer, though the second request is complete
        answer = exchange(port, request("GET / HTTP/1.1\nHost: a\nconnection: close\nConnection: keep-alive\n")
                          + request("GET / HTTP/1.1\nHost: a\n"))
    assert answer.count(b"HTTP/1.1 200 OK") == 1


def test_an_answer_leaves_in_one_write_and_a_stream_as_it_comes(monkeypatch):
    writes = []
    real = gevent.pywsgi.WSGIHandler._sendall
    monkeypatch.setattr(gevent.pywsgi.WSGIHandler, "_sendall", lambda self, data: writes.append(bytes(data)) or real(
        self, data))
    with serving() as port:
        whole = exchange(port, request("GET /x HTTP/1.1\nHost: a\nConnection: close\n"))
        assert len(writes) == 1 and writes[0] == whole and whole.endswith(b"body=")
        writes.clear()
        empty = exchange(port, request("GET /empty HTTP/1.1\nHost: a\nConnection: close\n"))
        assert len(writes) == 1 and empty.startswith(b"HTTP/1.1 204 No Content\r\n") and empty.endswith(b"\r\n\r\n")
        writes.clear()
        streamed = exchange(port, request("GET /stream HTTP/1.1\nHost: a\nConnection: close\n"))
    # The head rides with the first chunk; the others follow as they come, then the chunked terminator.
    assert len(writes) == 4 and writes[0].startswith(b"HTTP/1.1 200 OK") and writes[0].endswith(b"4\r\none,\r\n")
    assert streamed.endswith(b"5\r\nthree\r\n0\r\n\r\n")
