"""A broken platform's outbound side: a proxy between the platform and the mock backend.

The kit is told this proxy is the mock (`--mock-url`), so every tool URL points here and every
call the platform makes passes through. For each fault switched on it bends what the endpoint
receives, as a platform with that bug would send it: calls one after another instead of
together, a cookie, the model's subject in the path, a claim tampered with (the echo then reports
the tampered claims, and the mock's call record, which the kit reads through this proxy, the
tampered assertion, re-signed with the double's published key so only that claim is wrong), or
no call at all (`unreachable`: the mock as a platform that may not call it sees it).
Anything else, including the mock's socket faults, passes through unchanged.
"""
from __future__ import annotations

import json
import re
import secrets
from collections import defaultdict
from typing import Any, Callable, Iterator

import gevent
import gevent.lock
import jwt
import requests
import urllib3

from conformance.platform.budgets import IN_TIME_MARGIN_SECONDS
from conformance.tokens import with_payload
from mock_backend.faults import SocketFault
from tests.conformance_platform.forwarding import Incoming, Outgoing, passable, send
from tests.conformance_platform.state import DEADLINE_SECONDS, Shared

TOOL = re.compile(r"/tools/([^/?]+)/")
SOMEONE_ELSE = "someone-else"
#: The mock's call record, where the kit reads the assertion each call carried.
CALL_RECORD = "/_calls"
#: `hold-slow` holds calls to the mock's `delay/<s>` of at least this many seconds until past the
#: deadline, as a platform whose deadline is too short would time them out: the call answering in time by
#: just the kit's margin, and no shorter one.
SLOW_FROM_SECONDS = DEADLINE_SECONDS - IN_TIME_MARGIN_SECONDS

#: How each tampering changes an assertion's claims; `unsigned` is not re-signed afterwards.
TAMPERINGS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "unsigned": lambda c: {**c, "sub": SOMEONE_ELSE},
    "iss": lambda c: {**c, "iss": f"{c.get('iss')}/elsewhere"},
    "aud-list": lambda c: {**c, "aud": [c.get("aud"), "another_tool"]},
    "sub": lambda c: {**c, "sub": SOMEONE_ELSE},
    "anon": lambda c: {**c, "anon": not c.get("anon")},
    "turn": lambda c: {**c, "turn": secrets.token_urlsafe(16)},
    "exp": lambda c: {**c, "exp": c.get("iat", 0) + 3600},
    "jti": lambda c: {**c, "jti": "the-same-jti-every-time"},
    "no-approval": lambda c: {k: v for k, v in c.items() if k != "approval"},
}


def _unverified(token: str) -> dict[str, Any]:
    try:
        return jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return {}


class Back:
    """The proxy in front of the mock. Set `upstream` to the mock's URL once it is up."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.upstream = ""
        self.faults: dict[str, Any] = {}
        #: `sequential` runs the calls of one step (one `turn` claim) one at a time, as a platform that forgot to
        #: run them in parallel would; steps of other cases, running meanwhile, do not queue behind them.
        self.one_at_a_time: dict[str, gevent.lock.Semaphore] = defaultdict(gevent.lock.Semaphore)
        #: The Authorization header each tampered call is reported to have carried, by its number in the mock's
        #: call record (which its echo names).
        self.forged: dict[int, str] = {}

    def on(self, fault: str, tool: str | None) -> bool:
        """Whether `fault` is on for calls to `tool` (a fault given a pattern matches tool names)."""
        pattern = self.faults.get(fault)
        if pattern is None:
            return False
        return not isinstance(pattern, str) or (tool is not None and re.search(pattern, tool) is not None)

    def handle(self, incoming: Incoming) -> Outgoing:
        """Forward one call to the mock, bent by the faults on for its tool."""
        if incoming.path == CALL_RECORD:
            return self.call_record(incoming)
        found = TOOL.match(incoming.path)
        tool = found.group(1) if found else None
        if tool is not None and self.on("unreachable", tool):  # the platform's calls never get through
            return Outgoing(502, {}, _broken("empty-response"))
        token = incoming.headers.get("Authorization", "").partition(" ")[2]
        claims = _unverified(token)
        self.bend_request(incoming, tool, claims.get("sub"))
        locked = self.one_at_a_time[str(claims.get("turn"))] if self.on("sequential", tool) else None
        if locked:
            locked.acquire()
        try:
            response = send(self.upstream, incoming, stream=True)
        except requests.ConnectionError:
            if locked:
                locked.release()
            return Outgoing(502, {}, _broken("empty-response"))  # the mock closed without a byte: so do we
        tampering = self.tampering(tool)
        if tampering and "/echo" in incoming.path and response.status_code == 200:
            try:
                body = response.content
            finally:
                response.close()
                if locked:
                    locked.release()
            return Outgoing(200, passable(dict(response.headers)), self.tamper(body, tampering, token))
        headers = passable(dict(response.headers))
        if "Content-Length" in response.headers:  # the body is relayed byte for byte: keep its framing
            headers["Content-Length"] = response.headers["Content-Length"]
        return Outgoing(response.status_code, headers, self.relay(response, locked))

    def bend_request(self, incoming: Incoming, tool: str | None, sub: str | None) -> None:
        """The request as a platform with the switched-on bugs would have built it."""
        if self.on("add-cookie", tool):
            incoming.headers["Cookie"] = "session=forwarded-by-a-broken-platform"
        if sub and tool in self.shared.model_subjects and self.on("model-subject", tool):
            incoming.target = incoming.target.replace(sub, str(self.shared.model_subjects[tool]))
        if sub and self.on("wrong-subject", tool):
            incoming.target = incoming.target.replace(sub, SOMEONE_ELSE)
            incoming.body = incoming.body.replace(sub.encode(), SOMEONE_ELSE.encode())
        if self.on("mangle-request", tool):  # a path value's slashes decoded, the query string lost
            incoming.target = incoming.target.split("?", 1)[0].replace("%2F", "/")
        if "rewrite-path" in self.faults:
            old, new = self.faults["rewrite-path"]
            incoming.target = incoming.target.replace(old, new)
        slow = re.search(r"/delay/([0-9.]+)", incoming.path)
        if slow and float(slow.group(1)) >= SLOW_FROM_SECONDS and self.on("hold-slow", tool):
            gevent.sleep(DEADLINE_SECONDS + 2)

    def tampering(self, tool: str | None) -> str | None:
        """The tampering switched on for this tool, if any (`tamper` maps patterns to tamperings)."""
        for pattern, name in (self.faults.get("tamper") or {}).items():
            if tool is not None and re.search(pattern, tool):
                return name
        return None

    def tamper(self, body: bytes, tampering: str, token: str) -> bytes:
        """The echo's body reporting the claims of `token` changed by `tampering`; the call record will report the
        assertion changed the same way."""
        seen = json.loads(body)
        claims = TAMPERINGS[tampering](_unverified(token))
        if tampering == "unsigned":
            forged = with_payload(token, claims)
        else:
            forged = self.shared.double_key.sign(claims)
        self.forged[seen["call"]] = f"Bearer {forged}"
        seen["claims"] = claims
        return (json.dumps(seen, separators=(",", ":")) + "\n").encode()

    def call_record(self, incoming: Incoming) -> Outgoing:
        """The mock's call record, each tampered call carrying the assertion its echo's claims belong to."""
        response = send(self.upstream, incoming)
        record = response.json()
        for call in record.get("calls", []):
            call["authorization"] = self.forged.get(call.get("id"), call.get("authorization"))
        return Outgoing.of_json(response.status_code, record)

    def relay(self, response: requests.Response, locked: gevent.lock.Semaphore | None) -> Iterator[bytes]:
        """The mock's body as it comes; a connection the mock broke is broken here too."""
        try:
            for chunk in response.raw.stream(4096, decode_content=False):
                yield chunk
        except (urllib3.exceptions.HTTPError, requests.RequestException, OSError) as broken:
            raise SocketFault("reset") from broken
        finally:
            response.close()
            if locked:
                locked.release()


def _broken(kind: str) -> Iterator[bytes]:
    raise SocketFault(kind)
    yield b""  # pragma: no cover  (a generator, so the fault happens when the server reads it)
