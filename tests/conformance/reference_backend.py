"""A small integrator's backend written the way docs/conformance.md tells one to: pyjwt with PyJWKClient.

`ReferenceBackend(issuer)` is a WSGI app serving two tools, `get_orders` at `/users/<subject>/orders`
(per-user) and `search_products` at `/products` (shared). It verifies each call as the doc's pyjwt
snippets say: `typ` pinned, no key a token embeds or points to, keys only from the issuer's key set
(cached, refetched on an unknown kid at most once per cooldown, kept when a refetch fails), the
organization's one algorithm (ES256 unless told), every claim required, the exact issuer and
audience, a few seconds of leeway, the lifetime bounded, the path's subject equal to `sub`, no
credential in its answers, and, told `single_use`, each `jti` taken once.

Each flaw switches off or gets wrong exactly one of those, as real backends do, so the kit's tests
can show each is caught by exactly one case. Nothing here is the kit's or the mock's code.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import warnings
from typing import Any, Callable, Iterable

import jwt
import requests
from cryptography import x509
from jwt.warnings import InsecureKeyLengthWarning

TYP = "JWT"
LEEWAY = 5
LIFETIME = 30
REQUIRED = ("exp", "iat", "iss", "aud", "sub", "jti")
FORBIDDEN_HEADERS = ("jwk", "jku", "x5u", "x5c")

#: Each flaw, and the one endpoint case it must fail.
FLAWS: dict[str, str] = {
    "exp-optional": "endpoint/no-expiry-rejected",              # pyjwt's default: exp not required
    "lifetime-unbounded": "endpoint/long-lifetime-rejected",    # pyjwt's default: a year is fine
    "iat-optional": "endpoint/missing-claim-rejected",
    "jti-optional": "endpoint/missing-claim-rejected",
    "sub-optional": "endpoint/missing-claim-rejected",          # seen on a shared tool: no path subject
    "leeway-59": "endpoint/just-expired-rejected",
    "typ-ignored": "endpoint/session-token-rejected",
    "trusts-jwk": "endpoint/embedded-key-rejected",
    "follows-jku": "endpoint/embedded-key-rejected",
    "follows-x5u": "endpoint/embedded-key-rejected",
    "kid-is-a-file": "endpoint/kid-injection-rejected",
    "kid-in-sql": "endpoint/kid-injection-rejected",
    "fetches-kid-url": "endpoint/kid-injection-rejected",      # refuses, but only after fetching
    "caches-forever": "endpoint/key-rotation-picked-up",
    "any-subject": "endpoint/other-subject-rejected",
    "lifetime-100": "endpoint/long-lifetime-rejected",          # bounded, but at 100 s, not 30 + leeway
    "iss-unchecked": "endpoint/other-issuer-rejected",          # keys from the issuer, iss never compared
    "no-cooldown": "endpoint/jwks-refetch-bounded",             # refetches on every unknown kid
    "drops-keys-on-failure": "endpoint/keys-kept-when-issuer-fails",  # pyjwt before 2.15.1 emptied its cache
    "echoes-authorization": "endpoint/no-credential-echoed",    # a debugging echo of the request's headers
    "alg-from-token": "endpoint/other-algorithm-rejected",      # algorithms=[the token's alg]: caught under RS256
}

#: The flaws only a kit signing with another algorithm than ES256 can catch, and that algorithm.
FLAW_ALGORITHMS = {"alg-from-token": "RS256"}

#: Where `kid-is-a-file` keeps its legacy HMAC secrets, one file per kid (none, in fact).
KEY_DIRECTORY = os.path.dirname(os.path.abspath(__file__))


class Refused(Exception):
    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


class ReferenceBackend:
    """The backend: `ReferenceBackend(issuer, flaw=None, cooldown=0.1)` is a WSGI app."""

    def __init__(self, issuer: str, flaw: str | None = None, cooldown: float = 0.1, *,
                 people: Iterable[str] | None = None, not_yours: int = 403, requires_approval: bool = False,
                 algorithm: str = "ES256", single_use: bool = False) -> None:
        """`people`: the subjects that exist (None: anyone), others answered 404 once verified;
        `not_yours`: the status for another person's orders (403, or 404 to hide them);
        `requires_approval`: both tools are consequential, so a call without an `approval` claim is refused;
        `algorithm`: the organization's, pinned; `single_use`: each assertion's `jti` is taken once."""
        if flaw is not None and flaw not in FLAWS:
            raise ValueError(f"no such flaw {flaw!r}")
        self.issuer, self.flaw, self.algorithm = issuer, flaw, algorithm
        self.people = None if people is None else set(people)
        self.not_yours = not_yours
        self.requires_approval = requires_approval
        self.single_use, self.taken = single_use, set()
        # The JWKS client pyjwt ships: a cached key set, one refetch per cooldown on an unknown kid.
        # Caching forever is that same client with a cooldown no run outlasts; no cooldown, one of 0.
        client = _DroppingKeys if flaw == "drops-keys-on-failure" else jwt.PyJWKClient
        self.keys = client(f"{issuer}/.well-known/jwks.json", lifespan=300,
                           cooldown_duration={"caches-forever": 10 ** 6, "no-cooldown": 0}.get(flaw or "", cooldown))
        self.secrets = sqlite3.connect(":memory:", check_same_thread=False)
        self.secrets.execute("CREATE TABLE keys (kid TEXT, secret TEXT)")

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        orders = re.fullmatch(r"/users/([^/]+)/orders", path)
        tool = "get_orders" if orders else "search_products" if path == "/products" else None
        try:
            if tool is None:
                raise Refused(404, "no such route")
            claims = self.verify(environ.get("HTTP_AUTHORIZATION", ""), tool)
            if orders and self.people is not None and orders.group(1) not in self.people:
                raise Refused(404, "no such person")
            if orders and self.flaw != "any-subject" and claims.get("sub") != orders.group(1):
                raise Refused(self.not_yours, "not your orders")
            if self.requires_approval and not (isinstance(claims.get("approval"), str) and claims["approval"]):
                raise Refused(403, "not approved by the person")
            if self.single_use:
                if claims["jti"] in self.taken:  # a test backend: its memory lives as long as one run
                    raise Refused(401, "assertion already taken")
                self.taken.add(claims["jti"])
            status, body = "200 OK", {"orders": []} if orders else {"products": []}
            if self.flaw == "echoes-authorization":
                body["request_headers"] = {"Authorization": environ.get("HTTP_AUTHORIZATION", "")}
        except Refused as refused:
            status, body = f"{refused.status} Refused", {"error": str(refused)}
        data = json.dumps(body).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    def verify(self, authorization: str, tool: str) -> dict[str, Any]:
        """The claims of a valid assertion for `tool`, or Refused(401)."""
        scheme, _, token = authorization.partition(" ")
        if scheme != "Bearer" or not token:
            raise Refused(401, "no token")
        try:
            header = jwt.get_unverified_header(token)
            key, algorithms = self.key_for(token, header)
            if self.flaw != "typ-ignored" and header.get("typ") != TYP:
                raise Refused(401, "not an assertion")
            required = [c for c in REQUIRED if self.flaw != f"{c}-optional"]
            leeway = 59 if self.flaw == "leeway-59" else LEEWAY
            issuer = None if self.flaw == "iss-unchecked" else self.issuer
            with warnings.catch_warnings():  # the flawed lookups key HMACs with short secrets: that is the point
                warnings.simplefilter("ignore", InsecureKeyLengthWarning)
                claims = jwt.decode(token, key, algorithms=algorithms, audience=tool, issuer=issuer,
                                    leeway=leeway, options={"require": required, "strict_aud": True})
        # TypeError: pyjwt handed a key of another type than the token's algorithm takes.
        except (jwt.PyJWTError, OSError, ValueError, TypeError, requests.RequestException) as error:
            raise Refused(401, f"{type(error).__name__}: {error}") from None
        lifetime = 100 if self.flaw == "lifetime-100" else LIFETIME + LEEWAY
        if self.flaw != "lifetime-unbounded" and "exp" in claims and "iat" in claims \
                and claims["exp"] - claims["iat"] > lifetime:
            raise Refused(401, "lives too long")
        return claims

    def key_for(self, token: str, header: dict[str, Any]) -> tuple[Any, list[str]]:
        """The key to verify with, and the algorithms allowed: ES256 from the issuer's set, unless a flaw."""
        kid = str(header.get("kid", ""))
        alg = [str(header.get("alg"))]  # what the flawed lookups below wrongly trust
        if self.flaw == "trusts-jwk" and "jwk" in header:
            return jwt.PyJWK(header["jwk"]).key, alg
        if self.flaw == "follows-jku" and "jku" in header:
            return jwt.PyJWKClient(header["jku"]).get_signing_key_from_jwt(token).key, alg
        if self.flaw == "follows-x5u" and "x5u" in header:
            pem = requests.get(header["x5u"], timeout=5).content
            return x509.load_pem_x509_certificate(pem).public_key(), alg
        if self.flaw == "fetches-kid-url" and kid.startswith("http"):
            requests.get(kid, timeout=5)  # looked at, then not used: still a fetch a token chose
        if self.flaw == "kid-is-a-file":  # legacy HMAC secrets in files named by kid, else the key set
            try:
                with open(os.path.join(KEY_DIRECTORY, kid), "rb") as file:
                    return file.read(), alg
            except OSError:
                pass
        if self.flaw == "kid-in-sql":  # legacy HMAC secrets in a table, looked up by a kid pasted into SQL
            try:
                row = self.secrets.execute(f"SELECT secret FROM keys WHERE kid = '{kid}'").fetchone()
            except sqlite3.Error:
                row = None
            if row:
                return row[0].encode(), alg
        if set(FORBIDDEN_HEADERS) & header.keys():
            raise Refused(401, "the token brings its own key")
        key = self.keys.get_signing_key_from_jwt(token).key
        return key, alg if self.flaw == "alg-from-token" else [self.algorithm]


class _DroppingKeys(jwt.PyJWKClient):
    """PyJWKClient as it was before pyjwt 2.15.1: a failed fetch emptied the cached key set, so every call after it
    fetched again, and failed, while the key server was down."""

    def fetch_data(self) -> Any:
        try:
            return super().fetch_data()
        except jwt.PyJWKClientConnectionError:
            if self.jwk_set_cache is not None:
                self.jwk_set_cache.put(None)  # what the old `finally` did
            raise
