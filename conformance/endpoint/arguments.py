"""The endpoint command's options, and the checks that refuse every one that cannot work before a case runs.

Each check names the option and says, in one sentence, what it must be; the command then stops with exit 2 (the
runner's CouldNotRun) rather than run cases that would all fail for that one reason. The tool's description follows
the platform's own rules for a tool (spec/defining-a-tool: a name of letters, digits and underscores; an absolute
http or https URL with no user info or fragment, placeholders only in its path; a subject of 1 to 256 characters
with no control characters, never . or ..), since a backend is certified for a tool the platform could call.
"""
from __future__ import annotations

import ipaddress
import re
from types import SimpleNamespace
from urllib.parse import urlsplit

import click

from commandline import Checked
from conformance.endpoint.target import METHODS, PLACEHOLDER, SUBJECT, ToolCall
from conformance.limits import ROTATION_WAIT_MAX_SECONDS, ROTATION_WAIT_SECONDS
from conformance.runner import CouldNotRun
from conformance.tokens import ALGORITHM, ALGORITHMS

DEFAULT_SUBJECT = "conformance-user"

#: The platform's rules for a tool's name and its subject (spec/defining-a-tool.txt; service.registry.rules).
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_TOOL_NAME_CHARS = 64
MAX_SUBJECT_CHARS = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: Any `{…}` in a URL, well formed or not: each must be a placeholder with a name.
_BRACED = re.compile(r"\{([^{}]*)\}")
#: A host name (RFC 1123 labels) or a dotted IPv4 address: what the issuers listen on and the backend reaches.
_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
                   r"[A-Za-z0-9])?)*")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a port: a whole number from 0 to 65535") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"{port} is not a port: a whole number from 0 to 65535")
    return port


def _method(text: str) -> str:
    if text.upper() not in METHODS:
        raise ValueError(f"{text!r} is not one of {', '.join(METHODS)}")
    return text.upper()


def _rotation_wait(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 <= seconds <= ROTATION_WAIT_MAX_SECONDS:  # NaN too
        raise ValueError(f"{text!r} is not a number of seconds from 0 to {ROTATION_WAIT_MAX_SECONDS:g}")
    return seconds


#: The endpoint command's own options (selection and reports are the command's, conformance/cli.py).
OPTIONS: list[click.Parameter] = [
    click.Option(["--url"], required=True,
                 help="The tool's URL; {name} placeholders are path parameters, {subject} is filled with --subject."),
    click.Option(["--method"], required=True, type=Checked("|".join(METHODS), _method),
                 help="The tool's HTTP method (any case)."),
    click.Option(["--tool"], required=True, help="The tool's name: the assertion's aud."),
    click.Option(["--subject"], default=DEFAULT_SUBJECT, show_default=True,
                 help="The assertion's sub and the {subject} value."),
    click.Option(["--other-subject"], metavar="S",
                 help="A second person the backend knows, whose URL the subject-binding case points the first "
                      "person's assertion at (default: the subject plus '-other'); name a real one if your backend "
                      "answers 404 for strangers."),
    click.Option(["--param"], multiple=True, metavar="K=V",
                 help="A parameter, placed as the URL says; K:=V reads V as JSON (repeatable)."),
    click.Option(["--algorithm"], type=click.Choice(ALGORITHMS), default=ALGORITHM, show_default=True,
                 help="The algorithm your organization signs with (toolgate org create --algorithm): the kit's key, "
                      "and every token it signs or forges, use it."),
    click.Option(["--jwks-port"], type=Checked("P", _port), default=0, metavar="P",
                 help="Serve the kit's key set on this port (default: any free port)."),
    click.Option(["--untrusted-port"], type=Checked("P", _port), default=0, metavar="P",
                 help="Serve the untrusted issuer (the forgeries' own key set, and the URLs a token's jku or x5u "
                      "points to) on this port (default: any free port); a firewalled CI opens it like --jwks-port."),
    click.Option(["--issuer-host"], default="127.0.0.1", show_default=True,
                 help="The host in both issuers' URLs, where the backend reaches the kit."),
    click.Option(["--key-file"], metavar="FILE",
                 help="Keep the kit's signing key in FILE (created if missing), so a backend that cached the key "
                      "set keeps trusting it across runs."),
    click.Option(["--requires-approval"], is_flag=True,
                 help="The tool requires the person's approval: the kit's correct calls carry an approval claim, as "
                      "the platform's approved calls do, and endpoint/no-approval-rejected checks that a call "
                      "without one is refused (without this option, that case is skipped)."),
    click.Option(["--single-use"], is_flag=True,
                 help="The endpoint takes each assertion once (recommended for a consequential tool, "
                      "docs/approvals.md): endpoint/replay-rejected sends one twice and checks the second is "
                      "refused (without this option, that case is skipped)."),
    click.Option(["--rotation-wait"], type=Checked("SECONDS", _rotation_wait), default=ROTATION_WAIT_SECONDS,
                 metavar="SECONDS",
                 help=f"How long endpoint/key-rotation-picked-up keeps calling with a newly published key before it "
                      f"fails (default {ROTATION_WAIT_SECONDS:g}: jose's JWKS client refetches at most every 30 s)."),
]


def check_url(url: str) -> None:
    """CouldNotRun unless `url` is one the platform would call, with well-formed placeholders in its path only."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not one
    except ValueError as exc:
        raise CouldNotRun(f"--url {url!r} is not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CouldNotRun(f"--url {url!r} is not an absolute http or https URL")
    if parts.username is not None or parts.password is not None or "#" in url or any(c.isspace() for c in url):
        raise CouldNotRun(f"--url {url!r} carries user info, a fragment or a space, which the platform refuses in a "
                          f"tool's URL")
    if "{" in parts.netloc + parts.query or "}" in parts.netloc + parts.query:
        raise CouldNotRun(f"--url {url!r} has a placeholder outside its path, where the platform allows none")
    if "{" in _BRACED.sub("", parts.path) or "}" in _BRACED.sub("", parts.path):
        raise CouldNotRun(f"--url {url!r} has a brace that opens or closes no placeholder (write {{name}})")
    for name in _BRACED.findall(parts.path):
        if not NAME.fullmatch(name):
            raise CouldNotRun(f"--url {url!r}: {{{name}}} is not a placeholder name (letters, digits and "
                              f"underscores, not starting with a digit)")
        if name != SUBJECT and name.casefold() == SUBJECT:
            raise CouldNotRun(f"--url {url!r}: the subject's placeholder is spelled {{subject}}, in lower case")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise CouldNotRun(f"--url {url!r} has a . or .. segment, which HTTP clients remove from the path")


def check_subject(option: str, subject: str) -> None:
    """CouldNotRun unless `subject` is one a session token may carry (and so one path segment)."""
    if not 1 <= len(subject) <= MAX_SUBJECT_CHARS or _CONTROL.search(subject) or subject in (".", ".."):
        raise CouldNotRun(f"{option} {subject!r} is not a subject: 1 to {MAX_SUBJECT_CHARS} characters with no "
                          f"control characters, and not . or ..")


def check_issuer_host(host: str) -> None:
    """CouldNotRun unless the issuers can listen on `host` and a backend can reach them there."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and (address.version != 4 or address.is_unspecified):
        raise CouldNotRun(f"--issuer-host {host} is not an address a backend can reach the kit at: give a host "
                          f"name or an IPv4 address")
    if address is None and not _HOST.fullmatch(host):
        raise CouldNotRun(f"--issuer-host {host!r} is not a host name or IPv4 address (no scheme, port or path)")


def check_ports(args: SimpleNamespace) -> None:
    """CouldNotRun when the two issuers, or an issuer and the endpoint, would need the same port."""
    if args.jwks_port and args.jwks_port == args.untrusted_port:
        raise CouldNotRun(f"--jwks-port and --untrusted-port are both {args.jwks_port}: the kit's issuer and the "
                          f"untrusted one each need a port of their own")
    url = urlsplit(args.url)
    endpoint_port = url.port or (443 if url.scheme == "https" else 80)
    if url.hostname == args.issuer_host:
        for option in ("--jwks-port", "--untrusted-port"):
            if getattr(args, option[2:].replace("-", "_")) == endpoint_port:
                raise CouldNotRun(f"{option} {endpoint_port} is the endpoint's own port (--url), where the kit "
                                  f"cannot serve a key set")


def check_arguments(args: SimpleNamespace) -> ToolCall:
    """Every check of the command line, in the options' order; the tool's call if they all hold, else CouldNotRun."""
    check_url(args.url)
    if not NAME.fullmatch(args.tool) or len(args.tool) > MAX_TOOL_NAME_CHARS:
        raise CouldNotRun(f"--tool {args.tool!r} is not a tool name: 1 to {MAX_TOOL_NAME_CHARS} letters, digits and "
                          f"underscores, not starting with a digit")
    check_subject("--subject", args.subject)
    if args.other_subject is not None:
        check_subject("--other-subject", args.other_subject)
        if args.other_subject == args.subject:
            raise CouldNotRun(f"--other-subject {args.other_subject!r} is --subject itself: name a second person")
        if SUBJECT not in PLACEHOLDER.findall(args.url):
            raise CouldNotRun("--other-subject is for a URL carrying {subject}, and this --url carries none")
    call = ToolCall.from_arguments(args.method, args.url, args.tool, args.subject, args.param)
    for name in call.params:
        if not NAME.fullmatch(name) or name.casefold() == SUBJECT:
            raise CouldNotRun(f"--param {name}: a parameter's name is letters, digits and underscores, not starting "
                              f"with a digit, and not the subject's")
    if args.other_subject is not None:
        call.build(args.other_subject)  # its URL must be one the kit can build too
    check_issuer_host(args.issuer_host)
    check_ports(args)
    return call
