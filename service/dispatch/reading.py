"""Reading a response body with bounded time and memory.

The body is read a chunk at a time with its Content-Encoding undone as it streams, so what counts
against the cap is the decoded text: a gzip bomb is cut off after the first characters past the
cap, and a 1 GB body costs one chunk of memory, not a gigabyte.
"""
from __future__ import annotations

import codecs
import functools
import zlib
from email.message import Message
from typing import Callable, Iterable, Iterator

#: Bytes asked of the socket at a time: small enough to bound memory, large enough to be cheap.
CHUNK_BYTES = 8_192


@functools.lru_cache(maxsize=256)
def charset_of(content_type: str | None) -> str:
    """The text encoding a Content-Type names with `charset=`; UTF-8 when absent or unusable."""
    if content_type:
        header = Message()
        header["Content-Type"] = content_type
        charset = header.get_content_charset()
        if charset:
            return _usable_codec(charset)
    return "utf-8"


@functools.lru_cache(maxsize=64)
def _usable_codec(charset: str) -> str:
    # The endpoint names the charset, so it may name a codec that is not a text encoding ("rot13",
    # "zlib": bytes.decode refuses those with LookupError) or one that cannot replace bad bytes
    # ("idna", "undefined": UnicodeError). UTF-8 stands in for those.
    try:
        b"\xffprobe".decode(charset, "replace")
    except (LookupError, UnicodeError):
        return "utf-8"
    return codecs.lookup(charset).name


def read_text(chunks: Iterable[bytes], charset: str, cap: int) -> str | None:
    """The whole body, given as decoded `chunks`, as text, or None as soon as it passes `cap` characters.

    Characters, not bytes: a multi-byte character counts once, and undecodable bytes become U+FFFD.
    Exactly `cap` characters pass. A few codecs refuse even then (UTF-16 without its byte-order
    mark) and raise UnicodeError, which the transport treats as a body it could not read.
    """
    decoder = codecs.getincrementaldecoder(charset)(errors="replace")
    parts: list[str] = []
    count = 0
    for chunk in chunks:
        text = decoder.decode(chunk)
        count += len(text)
        if count > cap:
            return None
        parts.append(text)
    tail = decoder.decode(b"", final=True)
    if count + len(tail) > cap:
        return None
    parts.append(tail)
    return "".join(parts)


def read_bytes(chunks: Iterable[bytes], cap: int) -> bytes | None:
    """The whole decoded body as bytes, or None as soon as it passes `cap` bytes (a shaped tool's raw body: its
    JSON is parsed from bytes, and the shape's result, not the body, is what counts against the model's cap)."""
    parts: list[bytes] = []
    count = 0
    for chunk in chunks:
        count += len(chunk)
        if count > cap:
            return None
        parts.append(chunk)
    return b"".join(parts)


def has_body(chunks: Iterable[bytes]) -> bool:
    """Whether the decoded body is non-empty, judged from its first non-empty chunk; the rest is never read."""
    return any(chunks)


def raw_chunks(read: Callable[[int], bytes]) -> Iterator[bytes]:
    """The body as it comes off the wire, CHUNK_BYTES at a time, from `read(n)` until it returns b""."""
    while True:
        chunk = read(CHUNK_BYTES)
        if not chunk:
            return
        yield chunk


def decoded_chunks(chunks: Iterable[bytes], content_encoding: str | None) -> Iterator[bytes]:
    """`chunks` with the Content-Encoding undone as they stream, never more than CHUNK_BYTES at a time.

    gzip and deflate (the encodings the platform offers) are undone; a body in any other coding is
    passed through as it came, so its size is what arrived. zlib's `max_length` bounds what one
    compressed chunk may expand to, so a gzip bomb costs one chunk of memory before the cap cuts it.
    Raises zlib.error for a body that is not what its header says.
    """
    codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if not codings or any(c not in _WBITS for c in codings):
        yield from chunks
        return
    for coding in reversed(codings):  # the last coding applied is the first undone
        chunks = _inflate(chunks, coding)
    yield from chunks


#: zlib window bits per coding: gzip framing, or zlib framing for deflate (with raw deflate as the
#: fallback some servers send, as urllib3 accepts).
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def _inflate(chunks: Iterable[bytes], coding: str) -> Iterator[bytes]:
    inflater = None
    members = 0
    for chunk in chunks:
        data = chunk
        while data:
            if inflater is None:
                inflater = zlib.decompressobj(_deflate_wbits(data) if coding == "deflate" else _WBITS[coding])
            try:
                out = inflater.decompress(data, CHUNK_BYTES)
            except zlib.error:
                if members:  # junk after a complete member is ignored, as urllib3 ignores it
                    return
                raise
            data = inflater.unconsumed_tail
            if inflater.eof:
                members += 1
                if coding == "deflate":
                    data = b""  # one zlib stream; anything after it is not part of the body
                else:
                    data = inflater.unused_data + data  # another gzip member may follow
                inflater = None
            if out:
                yield out
    if inflater is not None:
        tail = inflater.flush()
        if tail:
            yield tail


def _deflate_wbits(data: bytes) -> int:
    """zlib framing when `data` starts with a zlib header, else raw deflate (some servers send that)."""
    if len(data) >= 2 and data[0] & 0x0F == 8 and ((data[0] << 8) | data[1]) % 31 == 0:
        return zlib.MAX_WBITS
    return -zlib.MAX_WBITS
