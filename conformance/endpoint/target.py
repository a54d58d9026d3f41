"""The endpoint under test: how to build its request, and one bounded call to it.

The integrator describes the tool on the command line as the platform would know it: method,
URL template, tool name, and `k=v` parameters. Each parameter goes where the URL template says:
a `{k}` placeholder makes it a path parameter (one percent-encoded segment); any other goes in
the query for GET and DELETE and in the JSON body for POST, PUT and PATCH. `{subject}` is the
reserved subject, filled from `--subject` like the platform fills it from the session.
"""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import quote, urlsplit

import gevent
import requests

from conformance.issuer import KitIssuer
from conformance.limits import (
    CALL_DEADLINE_SECONDS,
    EXCERPT_CHARS,
    RESPONSE_CAP_CHARS,
    ROTATION_WAIT_SECONDS,
)
from conformance.runner import CouldNotRun
from conformance.tokens import assertion_claims

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
BODY_METHODS = ("POST", "PUT", "PATCH")
SUBJECT = "subject"
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

# UTF-8 spends at most four bytes on a character, so this many bytes always hold more
# characters than the cap allows, whatever the body's charset.
_READ_CAP_BYTES = 4 * (RESPONSE_CAP_CHARS + 1)
_CHARSET = re.compile(r"charset=\"?([\w.:-]+)", re.IGNORECASE)


def parse_param(text: str) -> tuple[str, Any]:
    """`k=v` is the string v; `k:=v` is v read as JSON (`count:=3`, `express:=true`)."""
    name, sep, value = text.partition("=")
    if not sep:
        raise CouldNotRun(f"--param {text!r} is not k=v")
    if name.endswith(":"):
        name = name[:-1]
        try:
            parsed: Any = json.loads(value)
        except ValueError as exc:
            raise CouldNotRun(f"--param {text!r}: the value after := is not JSON ({exc})") from exc
    else:
        parsed = value
    if not name:
        raise CouldNotRun(f"--param {text!r} has no name")
    return name, parsed


def _scalar_text(name: str, value: Any) -> str:
    """A path or query value: a scalar, written as the JSON scalar would read."""
    if isinstance(value, (list, dict)) or value is None:
        raise CouldNotRun(f"--param {name}: only a body parameter may be an array, object or null")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class ToolCall:
    """The tool as the platform would call it: method, URL template, name, subject, parameters."""

    method: str
    url: str
    tool: str
    subject: str
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_arguments(
        cls, method: str, url: str, tool: str, subject: str, params: Iterable[str]
    ) -> ToolCall:
        """Validate the command line's description of the tool; anything wrong is CouldNotRun."""
        method = method.upper()
        if method not in METHODS:
            raise CouldNotRun(f"--method {method} is not one of {', '.join(METHODS)}")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise CouldNotRun(f"--url {url!r} is not an http or https URL")
        if not tool:
            raise CouldNotRun("--tool names the tool the assertion is for; it cannot be empty")
        values: dict[str, Any] = {}
        for text in params:
            name, value = parse_param(text)
            if name in values:
                raise CouldNotRun(f"--param {name} is given twice")
            if name == SUBJECT:
                raise CouldNotRun("the subject is not a --param: it comes from --subject")
            values[name] = value
        missing = [n for n in PLACEHOLDER.findall(url) if n != SUBJECT and n not in values]
        if missing:
            raise CouldNotRun(f"the URL's {{{missing[0]}}} has no --param {missing[0]}=…")
        call = cls(method, url, tool, subject, values)
        call.build(subject)  # refuses values that cannot ride where they go
        return call

    def build(self, subject: str | None = None) -> tuple[str, dict[str, str], dict[str, Any] | None]:
        """(URL, query, JSON body or None) for a call made on behalf of `subject`."""
        in_path = set(PLACEHOLDER.findall(self.url))
        path_values = {SUBJECT: self.subject if subject is None else subject}
        path_values.update({k: v for k, v in self.params.items() if k in in_path})

        def segment(match: re.Match[str]) -> str:
            name = match.group(1)
            text = _scalar_text(name, path_values[name])
            # One segment: HTTP clients collapse dot segments, so these would change the path.
            if text in ("", ".", ".."):
                raise CouldNotRun(f"the path value of {{{name}}} cannot be {text!r}")
            return quote(text, safe="")

        url = PLACEHOLDER.sub(segment, self.url)
        rest = {k: v for k, v in self.params.items() if k not in in_path}
        if self.method in BODY_METHODS:
            return url, {}, rest
        return url, {k: _scalar_text(k, v) for k, v in rest.items()}, None


@dataclass(frozen=True)
class Answer:
    """What one call got back: status and body (read up to just past the cap), or a problem."""

    status: int | None
    body: str
    seconds: float
    problem: str | None = None

    @property
    def chars(self) -> int:
        """Characters of body read (no more than just past the cap)."""
        return len(self.body)

    @property
    def too_big(self) -> bool:
        """More characters than a successful response may carry."""
        return self.chars > RESPONSE_CAP_CHARS

    @property
    def accepted(self) -> bool:
        """A 2xx answer."""
        return self.status is not None and 200 <= self.status < 300

    def describe(self) -> str:
        """The answer in a few words, for a failure report's `actual`."""
        if self.problem is not None:
            return self.problem
        excerpt = self.body[:EXCERPT_CHARS] + ("…" if self.chars > EXCERPT_CHARS else "")
        if not self.body:
            return f"HTTP {self.status}, empty body"
        return f"HTTP {self.status} with body {excerpt!r}"


class _TooSlow(Exception):
    """The body was still coming when the call deadline passed."""


def _read_capped(response: requests.Response, started: float, deadline: float) -> str:
    """The body as text, read in chunks and stopped once it holds more than the cap allows."""
    received = bytearray()
    for chunk in response.iter_content(chunk_size=4096):
        received += chunk
        if time.monotonic() - started > deadline:
            raise _TooSlow
        if len(received) > _READ_CAP_BYTES:
            break
    match = _CHARSET.search(response.headers.get("Content-Type", ""))
    try:
        return received.decode(match.group(1) if match else "utf-8", errors="replace")
    except LookupError:
        return received.decode("utf-8", errors="replace")


def reachable(url: str) -> None:
    """Raise CouldNotRun unless something accepts a TCP connection at the URL's host and port."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=CALL_DEADLINE_SECONDS).close()
    except OSError as exc:
        raise CouldNotRun(f"cannot reach the endpoint at {parts.hostname}:{port}: {exc}") from exc


@dataclass
class EndpointTarget:
    """What the endpoint suite's checks run against: the tool, the kit's issuer, an untrusted one."""

    call: ToolCall
    issuer: KitIssuer
    untrusted: KitIssuer
    #: Another person, for the subject-binding case (`--other-subject`).
    other_subject: str = ""
    #: How long the rotation case waits for the endpoint to take the next key (`--rotation-wait`).
    rotation_wait: float = ROTATION_WAIT_SECONDS
    #: The spec's ten seconds. Only the kit's own tests give a shorter one, so a timeout costs them a second.
    deadline: float = CALL_DEADLINE_SECONDS
    #: The tool requires the person's approval (`--requires-approval`): every correct call carries an `approval`
    #: claim, as the platform's approved calls do, and endpoint/no-approval-rejected sends calls without one.
    requires_approval: bool = False
    #: The backend refuses an assertion it has already taken (`--single-use`): endpoint/replay-rejected checks it.
    single_use: bool = False
    _valid: Answer | None = field(default=None, init=False, repr=False)
    _valid_token: str = field(default="", init=False, repr=False)
    _valid_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.other_subject:
            self.other_subject = f"{self.call.subject}-other"

    @property
    def binds_subject(self) -> bool:
        """Whether the URL carries `{subject}`: only then does an assertion's sub pick whose data."""
        return SUBJECT in PLACEHOLDER.findall(self.call.url)

    def valid_answer(self) -> Answer:
        """The endpoint's answer to one correct call, made once per run and shared by every case.

        A forgery's refusal proves something only if a correct call is accepted; every forgery case
        asks this first, so an endpoint refusing everything errors them instead of passing them.
        """
        with self._valid_lock:
            if self._valid is None:
                self._valid_token = self.issuer.key.sign(self.claims())
                self._valid = self.send(self._valid_token)
            return self._valid

    def valid_token(self) -> str:
        """The assertion the run's one correct call carried (`valid_answer` makes that call if it is still to come)."""
        self.valid_answer()
        return self._valid_token

    @property
    def algorithm(self) -> str:
        """The algorithm the kit signs with (`--algorithm`), as the organization's issuer would."""
        return self.issuer.key.alg

    def claims(self, subject: str | None = None) -> dict[str, Any]:
        """Fresh, correct assertion claims from the trusted issuer for this tool (with an `approval` claim when the
        tool requires the person's approval)."""
        sub = self.call.subject if subject is None else subject
        return assertion_claims(self.issuer.url, self.call.tool, sub, approved=self.requires_approval)

    def send(self, token: str | None, subject: str | None = None) -> Answer:
        """Call the endpoint once with `token` as the Bearer (none at all if None), within the deadline.

        `subject` fills `{subject}` in place of `--subject`, for forgeries that claim another person.
        """
        url, query, body = self.call.build(subject)
        headers = {"Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        session = requests.Session()
        session.trust_env = False  # proxy variables and .netrc must not reroute or decorate a call
        started = time.monotonic()
        # One deadline for connect, headers and body: requests' own timeout bounds each read only.
        deadline = gevent.Timeout(self.deadline)
        deadline.start()
        try:
            response = session.request(
                self.call.method, url, params=query, json=body, headers=headers,
                allow_redirects=False, stream=True, timeout=self.deadline,
            )
            try:
                text = _read_capped(response, started, self.deadline)
            finally:
                response.close()
            return Answer(response.status_code, text, time.monotonic() - started)
        except gevent.Timeout as timeout:
            if timeout is not deadline:
                raise
            return self._late(started)
        except (_TooSlow, requests.Timeout):
            return self._late(started)
        except requests.RequestException as exc:
            return Answer(None, "", time.monotonic() - started, f"transport error: {exc}")
        finally:
            deadline.close()
            session.close()

    def _late(self, started: float) -> Answer:
        return Answer(None, "", time.monotonic() - started, f"no answer within {self.deadline:g} s")
