"""The call path's own client (geventhttpclient underneath) and its streaming decoder: bounded decoding, no header
injection, bounded pools. (That it judges every answer as the reference engines do: test_reference_engines.)"""
import gzip
import zlib

import pytest

from service.dispatch import AddressGuard, BuiltRequest
from service.dispatch.client import HOST_POOLS, GuardedClient
from service.dispatch.reading import CHUNK_BYTES, decoded_chunks


def test_a_line_break_in_the_authorization_is_refused_before_anything_is_sent(fresh_endpoint, fresh_guard):
    client = GuardedClient(fresh_guard)
    with pytest.raises(ValueError):
        client.open(BuiltRequest("GET", fresh_endpoint.url("/echo")), "Bearer a\r\nX-Injected: 1")
    assert fresh_endpoint.received == []


def test_pools_are_kept_for_at_most_HOST_POOLS_hosts():
    client = GuardedClient(AddressGuard())
    for port in range(1, HOST_POOLS + 10):
        client.pool("http", "127.0.0.1", port)
    assert len(client._pools) == HOST_POOLS
    assert ("http", "127.0.0.1", HOST_POOLS + 9) in client._pools and ("http", "127.0.0.1", 1) not in client._pools


TEXT = ("gold tier, " * 2_000).encode()


def _deflate(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


def pieces(data: bytes, size: int = 1_000) -> list[bytes]:
    return [data[at:at + size] for at in range(0, len(data), size)]


@pytest.mark.parametrize("coding, body", [
    ("gzip", gzip.compress(TEXT)),
    ("x-gzip", gzip.compress(TEXT)),
    ("deflate", _deflate(TEXT, zlib.MAX_WBITS)),
    ("deflate", _deflate(TEXT, -zlib.MAX_WBITS)),  # raw deflate, as some servers send it
    ("identity", TEXT),
    (None, TEXT),
], ids=["gzip", "x-gzip", "zlib-deflate", "raw-deflate", "identity", "none"])
def test_each_offered_encoding_is_undone_as_it_streams(coding, body):
    assert b"".join(decoded_chunks(pieces(body), coding)) == TEXT


def test_gzip_members_one_after_another_are_all_undone_and_junk_after_them_ignored():
    body = gzip.compress(TEXT[:500]) + gzip.compress(TEXT[500:]) + b"\x00junk"
    assert b"".join(decoded_chunks(pieces(body, 37), "gzip")) == TEXT


def test_an_encoding_not_offered_is_passed_through_as_it_came():
    assert b"".join(decoded_chunks([b"\x1f\x8b", b"raw"], "br")) == b"\x1f\x8braw"


def test_a_body_that_is_not_its_encoding_is_an_error():
    with pytest.raises(zlib.error):
        b"".join(decoded_chunks([b"this is not gzip at all"], "gzip"))


def test_a_bomb_expands_one_bounded_chunk_at_a_time():
    bomb = _deflate(b"a" * (64 * 1024 * 1024), 16 + zlib.MAX_WBITS)  # 64 MiB in about 64 KB
    chunks = decoded_chunks([bomb], "gzip")
    first = [next(chunks) for _ in range(50)]
    assert all(len(chunk) <= CHUNK_BYTES for chunk in first)
    assert sum(map(len, first)) == 50 * CHUNK_BYTES  # full chunks, inflated only as they are asked for
