"""The endpoint suite: the kit acts as the platform and checks an integrator's tool endpoint.

`SUITE` holds the cases; `add_arguments` and `open_target` are what the command line needs to
run them: the tool's description, and a target with the kit's own issuers serving their keys.
"""
from __future__ import annotations

import argparse
import contextlib
import os
from typing import Iterator

from conformance.endpoint.cases import SUITE
from conformance.endpoint.target import METHODS, EndpointTarget, ToolCall, reachable
from conformance.issuer import JWKS_PATH, KitIssuer
from conformance.limits import ROTATION_WAIT_MAX_SECONDS, ROTATION_WAIT_SECONDS
from conformance.runner import CouldNotRun
from conformance.tokens import SigningKey

__all__ = ["SUITE", "EndpointTarget", "add_arguments", "banner", "open_target"]

DEFAULT_SUBJECT = "conformance-user"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The endpoint command's own options (selection and reports are the runner's)."""
    parser.add_argument("--url", required=True,
                        help="the tool's URL; {name} placeholders are path parameters, "
                             "{subject} is filled with --subject")
    parser.add_argument("--method", required=True, type=str.upper, choices=METHODS)
    parser.add_argument("--tool", required=True, help="the tool's name: the assertion's aud")
    parser.add_argument("--subject", default=DEFAULT_SUBJECT,
                        help=f"the assertion's sub and the {{subject}} value (default {DEFAULT_SUBJECT})")
    parser.add_argument("--other-subject", metavar="S",
                        help="a second person the backend knows, whose URL the subject-binding case "
                             "points the first person's assertion at (default: the subject plus "
                             "'-other'); name a real one if your backend answers 404 for strangers")
    parser.add_argument("--param", action="append", default=[], metavar="K=V",
                        help="a parameter, placed as the URL says; K:=V reads V as JSON")
    parser.add_argument("--jwks-port", type=int, default=0, metavar="P",
                        help="serve the kit's key set on this port (default: any free port)")
    parser.add_argument("--untrusted-port", type=int, default=0, metavar="P",
                        help="serve the untrusted issuer (the forgeries' own key set, and the URLs "
                             "a token's jku or x5u points to) on this port (default: any free port); "
                             "a firewalled CI opens it like --jwks-port")
    parser.add_argument("--issuer-host", default="127.0.0.1",
                        help="the host in both issuers' URLs, where the backend reaches the kit")
    parser.add_argument("--key-file", metavar="FILE",
                        help="keep the kit's signing key in FILE (created if missing), so a "
                             "backend that cached the key set keeps trusting it across runs")
    parser.add_argument("--requires-approval", action="store_true",
                        help="the tool requires the person's approval: the kit's correct calls carry an "
                             "approval claim, as the platform's approved calls do, and "
                             "endpoint/no-approval-rejected checks that a call without one is refused "
                             "(without this option, that case is skipped)")
    parser.add_argument("--rotation-wait", type=_rotation_wait, default=ROTATION_WAIT_SECONDS,
                        metavar="SECONDS",
                        help=f"how long endpoint/key-rotation-picked-up keeps calling with a newly "
                             f"published key before it fails (default {ROTATION_WAIT_SECONDS:g}: jose's "
                             f"JWKS client refetches at most every 30 s)")


def _rotation_wait(text: str) -> float:
    seconds = float(text)
    if not 0 <= seconds <= ROTATION_WAIT_MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be from 0 to {ROTATION_WAIT_MAX_SECONDS:g} seconds")
    return seconds


@contextlib.contextmanager
def open_target(args: argparse.Namespace) -> Iterator[EndpointTarget]:
    """Validate the arguments, make sure the endpoint answers, and serve the kit's issuers.

    Raises CouldNotRun for bad arguments, an unreachable endpoint or a port already taken.
    """
    call = ToolCall.from_arguments(args.method, args.url, args.tool, args.subject, args.param)
    key = signing_key(args.key_file) if args.key_file else None
    reachable(call.url)
    with KitIssuer(args.issuer_host, args.jwks_port, key) as issuer, \
            KitIssuer(args.issuer_host, args.untrusted_port) as untrusted:
        yield EndpointTarget(call, issuer, untrusted, other_subject=args.other_subject or "",
                             rotation_wait=args.rotation_wait, requires_approval=args.requires_approval)


def signing_key(path: str) -> SigningKey:
    """The key kept in `path`, or a new one written there (owner-only) when the file is missing.

    A fresh key each run has a new `kid`; a backend that cached the last run's key set refetches
    it at most once per cooldown, so back-to-back runs could fail for that reason alone.
    """
    try:
        with open(path, "rb") as file:
            return SigningKey.from_pem(file.read())
    except FileNotFoundError:
        pass
    except (OSError, ValueError, TypeError) as exc:  # unreadable, not a key, or encrypted
        raise CouldNotRun(f"--key-file {path}: {exc}") from exc
    key = SigningKey.generate()
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(key.to_pem())
    except OSError as exc:
        raise CouldNotRun(f"--key-file {path}: {exc}") from exc
    return key


def banner(target: EndpointTarget) -> list[str]:
    """Printed before the cases run: the issuer the endpoint must trust for the run to pass."""
    lines = [f"issuer: {target.issuer.url} (trust it; the backend fetches {JWKS_PATH} there)",
             f"untrusted: {target.untrusted.url} (forgeries point here: reachable, never fetched)"]
    if target.requires_approval:
        lines.append(f"approval: {target.call.tool} requires the person's approval, so every correct call "
                     f"carries an approval claim")
    return lines
