"""Misbehaviour on demand, chosen by URL, for exercising how the platform handles a bad tool.

Every route is `/tools/<tool>/…` and serves the tool named in its URL: the assertion must be
minted for that tool. Every knob is capped (as httpbin caps `/delay` and `/bytes`), so a request
cannot make the mock sleep, stream or allocate without limit:

- `status/<code>`        that status with a small JSON body; `status/<code>/empty` with no body
- `delay/<seconds>`      sleep (at most `MAX_DELAY_SECONDS`), then 200 `{"slept": s}`
- `together/<group>/<count>?wait=S`  answer once `count` calls of `group` are here at once, or after S
                         seconds (at most `MAX_DELAY_SECONDS`): 200 `{"met", "most_present", ...}`
- `drip?bytes=N&interval=S`  N bytes, one per interval, headers at once (capped in count and time)
- `chars/<n>?char=é`     exactly n characters of `char`, UTF-8, streamed in chunks
- `gzip-bomb`            `Content-Encoding: gzip`, ~130 KB on the wire, 128 MiB decoded
- `redirect?code=302&body=1`  a redirect to this tool's `echo`, with or without a body
- `fault/<name>`         a broken connection (see mock_backend.faults)
- `echo`, `echo/<path>`  any method: what the platform sent, exactly, but the assertion (see `echo`)
"""
from __future__ import annotations

import json
import math
import zlib
from collections.abc import Iterator

import gevent
import gevent.lock
from flask import Blueprint, Response, current_app, jsonify, request, url_for
from werkzeug.routing import BaseConverter

from mock_backend.faults import FAULTS, SocketFault
from mock_backend.gathering import MAX_GATHERING_SIZE, MAX_GROUP_CHARS, Gatherings, TooManyGroups
from mock_backend.guard import call_id, serves, verified_claims

blp = Blueprint("behaviours", __name__, url_prefix="/tools/<tool>")

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]

MAX_DELAY_SECONDS = 15.0
#: How long a call of a gathering waits for the others when the URL does not say.
DEFAULT_GATHERING_WAIT_SECONDS = 5.0
#: Where create_app keeps the app's open gatherings.
GATHERINGS_KEY = "mock_backend.gatherings"
MAX_DRIP_BYTES = 10_000
MAX_DRIP_INTERVAL_SECONDS = 5.0
#: A drip never lasts longer than this, whatever its count and interval.
MAX_DRIP_SECONDS = 60.0
MAX_CHARS = 1_073_741_824
CHARS_PER_CHUNK = 65_536
GZIP_BOMB_DECODED_BYTES = 128 * 1024 * 1024
#: The gzip bomb goes out in chunks of this many bytes (a transfer size, unrelated to the platform's response cap).
BOMB_CHUNK_BYTES = 65_536
#: `reset` declares this long a body, sends `RESET_SENT_BYTES` of it, waits, then resets.
RESET_DECLARED_BYTES = 4_096
RESET_SENT_BYTES = 64
#: Long enough for the client to have read the headers before the RST arrives.
RESET_PAUSE_SECONDS = 0.1
REDIRECT_CODES = (301, 302, 303, 307, 308)
#: The one header the echo leaves out: the call's assertion (see `echo`).
NEVER_ECHOED = "authorization"
#: Bodies never allowed by HTTP, whatever the route is asked for.
BODILESS_CODES = (204, 304)


def _error(status: int, message: str):
    response = jsonify(error=message)
    response.status_code = status
    return response


class BadKnob(ValueError):
    """A query or path value that does not parse; answered 400."""


@blp.errorhandler(BadKnob)
def _bad_knob(error: BadKnob):
    return _error(400, str(error))


def _number(text: str | None, name: str, default: float) -> float:
    """A finite non-negative number from a URL, or BadKnob."""
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise BadKnob(f"{name} must be a non-negative number")
    return value


@blp.route("/status/<int:code>", methods=METHODS)
@serves()
def status(tool: str, code: int):
    """Answer `code` with a small JSON error body (none for 204 and 304, which may not have one)."""
    if not 200 <= code <= 599:
        raise BadKnob("code must be between 200 and 599")
    if code in BODILESS_CODES:
        return Response(status=code)
    return _error(code, f"mock status {code} for {tool}")


@blp.route("/status/<int:code>/empty", methods=METHODS)
@serves()
def status_empty(tool: str, code: int):
    """Answer `code` with no body at all (`Content-Length: 0`)."""
    if not 200 <= code <= 599:
        raise BadKnob("code must be between 200 and 599")
    return Response(b"", status=code)


@blp.route("/delay/<seconds>", methods=METHODS)
@serves()
def delay(tool: str, seconds: str):
    """Sleep, at most `MAX_DELAY_SECONDS`, then say how long."""
    slept = min(_number(seconds, "seconds", 0.0), MAX_DELAY_SECONDS)
    gevent.sleep(slept)
    return jsonify(slept=slept)


@blp.route("/together/<group>/<int:count>", methods=METHODS)
@serves()
def together(tool: str, group: str, count: int):
    """Answer once `count` calls of `group` are here at the same time, or once the wait is over."""
    if not 2 <= count <= MAX_GATHERING_SIZE:
        raise BadKnob(f"count must be between 2 and {MAX_GATHERING_SIZE}")
    if len(group) > MAX_GROUP_CHARS:
        raise BadKnob(f"group must be at most {MAX_GROUP_CHARS} characters")
    wait = min(_number(request.args.get("wait"), "wait", DEFAULT_GATHERING_WAIT_SECONDS), MAX_DELAY_SECONDS)
    try:
        gathered = current_app.extensions[GATHERINGS_KEY].join(group, count, wait)
    except TooManyGroups as full:
        return _error(503, str(full))
    return jsonify(group=group, count=count, met=gathered.met, most_present=gathered.most_present,
                   waited=round(gathered.waited_seconds, 3))


@blp.record_once
def _open_gatherings(state) -> None:
    state.app.extensions[GATHERINGS_KEY] = Gatherings()


@blp.route("/drip", methods=METHODS)
@serves()
def drip(tool: str):
    """`bytes` bytes, the first at once, then one per `interval`: each read is quick, the whole is slow."""
    count = int(min(_number(request.args.get("bytes"), "bytes", 10), MAX_DRIP_BYTES))
    interval = min(_number(request.args.get("interval"), "interval", 0.5), MAX_DRIP_INTERVAL_SECONDS)
    if interval > 0:
        count = min(count, 1 + int(MAX_DRIP_SECONDS / interval))

    def body() -> Iterator[bytes]:
        for index in range(count):
            if index:
                gevent.sleep(interval)
            yield b"*"

    return Response(body(), content_type="text/plain", headers={"Content-Length": str(count)})


@blp.route("/chars/<int:n>", methods=METHODS)
@serves()
def chars(tool: str, n: int):
    """Exactly `n` characters of `char` (default "a"), streamed; never built whole in memory."""
    char = request.args.get("char", "a")
    if len(char) != 1:
        raise BadKnob("char must be exactly one character")
    n = min(n, MAX_CHARS)
    encoded = char.encode("utf-8")

    def body() -> Iterator[bytes]:
        chunk = encoded * CHARS_PER_CHUNK
        whole, rest = divmod(n, CHARS_PER_CHUNK)
        for _ in range(whole):
            yield chunk
        if rest:
            yield encoded * rest

    return Response(body(), content_type="text/plain; charset=utf-8",
                    headers={"Content-Length": str(n * len(encoded))})


_bomb: bytes | None = None
# gevent's own lock, patched or not: its holder waits on the hub's thread pool, and a plain
# thread lock would block the whole hub for the next request that wants the bomb.
_bomb_lock = gevent.lock.Semaphore()


def gzip_bomb() -> bytes:
    """128 MiB of "a" as one gzip member, built once (in gevent's thread pool: zlib releases the
    GIL, so other requests are served meanwhile)."""
    global _bomb
    with _bomb_lock:
        if _bomb is None:
            _bomb = gevent.get_hub().threadpool.apply(_compress_bomb)
        return _bomb


def _compress_bomb() -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: gzip framing
    block = b"a" * (1 << 20)
    parts = [compressor.compress(block) for _ in range(GZIP_BOMB_DECODED_BYTES // len(block))]
    parts.append(compressor.flush())
    return b"".join(parts)


@blp.route("/gzip-bomb", methods=METHODS)
@serves()
def bomb(tool: str):
    """A small gzip body that decodes to 128 MiB: the platform's cap must count decoded size."""
    payload = gzip_bomb()
    chunks = (payload[at:at + BOMB_CHUNK_BYTES] for at in range(0, len(payload), BOMB_CHUNK_BYTES))
    return Response(chunks, content_type="text/plain",
                    headers={"Content-Encoding": "gzip", "Content-Length": str(len(payload))})


@blp.route("/redirect", methods=METHODS)
@serves()
def redirect(tool: str):
    """A redirect to this tool's echo, which the platform must not follow."""
    code = int(_number(request.args.get("code"), "code", 302))
    if code not in REDIRECT_CODES:
        raise BadKnob(f"code must be one of {', '.join(map(str, REDIRECT_CODES))}")
    with_body = request.args.get("body", "1")
    if with_body not in ("0", "1"):
        raise BadKnob("body must be 0 or 1")
    location = url_for("behaviours.echo", tool=tool, rest="", _external=True)
    body = json.dumps({"error": "moved", "location": location}) if with_body == "1" else ""
    return Response(body, status=code, content_type="application/json", headers={"Location": location})


@blp.route("/fault/<name>", methods=METHODS)
@serves()
def fault(tool: str, name: str):
    """Break the connection the way `name` says (needs the mock's own server)."""
    if name not in FAULTS:
        return _error(404, f"no such fault; choose one of: {', '.join(FAULTS)}")
    if name == "reset":
        # Headers and the start of a body, then the reset: the client is mid-body when it comes.
        return Response(_fail(name, b'{"data": "' + b"x" * (RESET_SENT_BYTES - 10)),
                        content_type="application/json",
                        headers={"Content-Length": str(RESET_DECLARED_BYTES)})
    return Response(_fail(name))


def _fail(kind: str, first: bytes = b"") -> Iterator[bytes]:
    if first:
        yield first
        gevent.sleep(RESET_PAUSE_SECONDS)
    raise SocketFault(kind)


class RestOfPath(BaseConverter):
    """Whatever follows, empty segments included (werkzeug's `path` refuses `//x` and `/`)."""

    regex = r"(?:/[\s\S]*)?"  # [\s\S]: a decoded CR or LF is part of the path too
    part_isolating = False


# Recorded before the echo route below: a blueprint replays its records in order, so the
# converter exists by the time the route that uses it is added.
@blp.record_once
def _register_converter(state) -> None:
    state.app.url_map.converters["rest"] = RestOfPath


@blp.route("/echo<rest:rest>", methods=METHODS + ["HEAD", "OPTIONS"], provide_automatic_options=False)
@serves()
def echo(tool: str, rest: str):
    """Exactly what arrived: method, raw path, query (raw and parsed), headers, body, and the claims it verified;
    all but the Authorization header. An endpoint's answer goes to the model as the tool's output, and the assertion
    in that header is a live bearer credential: echoed, it would sit in the model's context and the conversation's
    logs, for the model (or a prompt that steers it) to repeat. So it stays out, and `call` names this request in
    the call record (`GET /_calls`), where a check reads the assertion it carried."""
    raw = request.get_data(cache=False)
    text = raw.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = None
    # The request target as sent (the mock's server keeps it); PATH_INFO would be decoded.
    target = request.environ.get("RAW_URI") or request.full_path
    path, _, query = target.partition("?")
    return jsonify(
        method=request.method, path=path,
        query={"raw": query, "parsed": request.args.to_dict(flat=False)},
        headers={k: v for k, v in request.headers.items() if k.lower() != NEVER_ECHOED},
        body=text, json=parsed, claims=verified_claims(), call=call_id(),
    )
