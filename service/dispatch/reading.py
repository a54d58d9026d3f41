"""Reading a response body with bounded time and memory.

The body is read a chunk at a time with its Content-Encoding undone as it streams, so what counts
against the cap is the decoded text: a gzip bomb is cut off after the first characters past the
cap, and a 1 GB body costs one chunk of memory, not a gigabyte.
"""
from __future__ import annotations

import codecs
import functools
from email.message import Message
from typing import Any

#: Bytes asked of the socket at a time: small enough to bound memory, large enough to be cheap.
CHUNK_BYTES = 8_192


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


def read_text(raw: Any, charset: str, cap: int) -> str | None:
    """The whole body of urllib3 response `raw` as text, or None as soon as it passes `cap` characters.

    Characters, not bytes: a multi-byte character counts once, and undecodable bytes become U+FFFD.
    Exactly `cap` characters pass. A few codecs refuse even then (UTF-16 without its byte-order
    mark) and raise UnicodeError, which the transport treats as a body it could not read.
    """
    decoder = codecs.getincrementaldecoder(charset)(errors="replace")
    parts: list[str] = []
    count = 0
    for chunk in raw.stream(CHUNK_BYTES, decode_content=True):
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


def has_body(raw: Any) -> bool:
    """Whether urllib3 response `raw` has a non-empty (decoded) body, judged from one chunk at most."""
    return bool(raw.read(CHUNK_BYTES, decode_content=True))
