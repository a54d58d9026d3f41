"""The endpoint suite: the kit acts as the platform and checks an integrator's tool endpoint.

`SUITE` holds the cases; `OPTIONS` and `open_target` are what the command line needs to run
them: the tool's description, and a target with the kit's own issuers serving their keys.
"""
from __future__ import annotations

import contextlib
import os
from types import SimpleNamespace
from typing import Iterator

from conformance.endpoint.arguments import OPTIONS, check_arguments
from conformance.endpoint.cases import SUITE
from conformance.endpoint.target import EndpointTarget, reachable
from conformance.issuer import JWKS_PATH, KitIssuer
from conformance.runner import CouldNotRun
from conformance.tokens import SigningKey

__all__ = ["OPTIONS", "SUITE", "EndpointTarget", "banner", "open_target"]


@contextlib.contextmanager
def open_target(args: SimpleNamespace) -> Iterator[EndpointTarget]:
    """Validate the arguments, make sure the endpoint answers, and serve the kit's issuers.

    Raises CouldNotRun for bad arguments, an unreachable endpoint or a port already taken.
    """
    call = check_arguments(args)
    key = signing_key(args.key_file, args.algorithm) if args.key_file else SigningKey.generate(args.algorithm)
    reachable(call.url)
    with KitIssuer(args.issuer_host, args.jwks_port, key) as issuer, \
            KitIssuer(args.issuer_host, args.untrusted_port, alg=args.algorithm) as untrusted:
        yield EndpointTarget(call, issuer, untrusted, other_subject=args.other_subject or "",
                             rotation_wait=args.rotation_wait, requires_approval=args.requires_approval,
                             single_use=args.single_use)


def signing_key(path: str, alg: str = "ES256") -> SigningKey:
    """The `alg` key kept in `path`, or a new one written there (owner-only) when the file is missing.

    A fresh key each run has a new `kid`; a backend that cached the last run's key set refetches
    it at most once per cooldown, so back-to-back runs could fail for that reason alone.
    """
    try:
        with open(path, "rb") as file:
            return SigningKey.from_pem(file.read(), alg)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, TypeError) as exc:  # unreadable, not a key, encrypted, or another algorithm's
        raise CouldNotRun(f"--key-file {path}: {exc} (--algorithm {alg})") from exc
    key = SigningKey.generate(alg)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(key.to_pem())
    except OSError as exc:
        raise CouldNotRun(f"--key-file {path}: {exc}") from exc
    return key


def banner(target: EndpointTarget) -> list[str]:
    """Printed before the cases run: the issuer the endpoint must trust for the run to pass."""
    lines = [f"issuer: {target.issuer.url} (trust it; the backend fetches {JWKS_PATH} there; it signs with "
             f"{target.algorithm})",
             f"untrusted: {target.untrusted.url} (forgeries point here: reachable, never fetched)"]
    if target.requires_approval:
        lines.append(f"approval: {target.call.tool} requires the person's approval, so every correct call "
                     f"carries an approval claim")
    return lines
