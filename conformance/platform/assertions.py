"""Reading a call assertion the way an integrator's backend would, and reporting what is wrong with it.

The kit takes the token an endpoint received (the mock's echo shows it), fetches the key set from
the issuer the kit expects (the organization's, learnt from a session token the platform minted;
never the token's own `iss`), and checks the header, the signature and every claim. Each check
reports into a `Check`, so a case lists every problem at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jwt
import requests

from conformance.case import Check
from conformance.platform.budgets import REQUEST_TIMEOUT_SECONDS

#: Asymmetric algorithms a platform may sign with (ES256 by default); never `none`, never HMAC.
ALLOWED_ALGORITHMS = ("ES256", "EdDSA", "RS256")

JWKS_PATH = "/.well-known/jwks.json"

#: The claims every call assertion carries, and the JSON type of each.
CLAIM_TYPES: dict[str, type | tuple[type, ...]] = {
    "iss": str, "aud": str, "sub": str, "anon": bool, "turn": str, "iat": int, "exp": int, "jti": str,
}


def fetch_jwks(issuer: str) -> requests.Response:
    """GET `{issuer}/.well-known/jwks.json`, with no credentials at all."""
    with requests.Session() as session:
        session.trust_env = False
        return session.get(issuer + JWKS_PATH, timeout=REQUEST_TIMEOUT_SECONDS, allow_redirects=False)


@dataclass(frozen=True)
class Inspected:
    """A token as received: its header and claims (unverified until `verify` says so)."""

    token: str
    header: dict[str, Any]
    claims: dict[str, Any]

    @classmethod
    def parse(cls, token: str) -> Inspected | None:
        """The token's parts, or None when it is not a compact JWS with JSON header and payload."""
        try:
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return None
        return cls(token, header, claims)


def verify_signature(check: Check, inspected: Inspected, issuer: str, what: str = "assertion",
                     typ: str | None = "JWT") -> bool:
    """Check the header (its `typ` too, unless None) and the signature against the issuer's key set."""
    header = inspected.header
    if typ is not None:
        check.equal(f"{what} header typ", typ, header.get("typ"))
    alg = header.get("alg")
    if not check.expect(alg in ALLOWED_ALGORITHMS, f"{what} header alg",
                        f"one of {', '.join(ALLOWED_ALGORITHMS)}", alg):
        return False
    response = fetch_jwks(issuer)
    if not check.equal(f"GET {issuer}{JWKS_PATH}", 200, response.status_code):
        return False
    keys = {k.get("kid"): k for k in response.json().get("keys", []) if isinstance(k, dict)}
    jwk = keys.get(header.get("kid"))
    if not check.expect(jwk is not None, f"{what} header kid", f"one of the published kids {sorted(keys)}",
                        header.get("kid")):
        return False
    if not check.equal(f"alg of the published key {header.get('kid')}", alg, jwk.get("alg")):
        return False
    try:
        key = jwt.PyJWK(jwk, algorithm=alg).key
        jwt.decode(inspected.token, key, algorithms=[alg],
                   options={"verify_aud": False, "verify_exp": False, "verify_iat": False,
                            "verify_nbf": False, "verify_iss": False})
    except jwt.PyJWTError as error:
        check.fail(f"{what} signature", f"verifies with the published key {header.get('kid')}",
                   f"{type(error).__name__}: {error}")
        return False
    return True


def check_claim_types(check: Check, claims: dict[str, Any], what: str = "assertion") -> None:
    """Every claim of the contract is present with its type (a bool is not an int)."""
    for name, kind in CLAIM_TYPES.items():
        value = claims.get(name)
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        check.expect(ok, f"{what} claim {name}", f"a {getattr(kind, '__name__', kind)}",
                     "absent" if name not in claims else repr(value))
