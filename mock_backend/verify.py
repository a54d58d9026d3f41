"""Verifying the platform's call assertion: what an integrator's backend does before any work.

Every tool call arrives with `Authorization: Bearer <assertion>`, a JWT signed by the organization's
key. This module is the reference verifier. Read it top to bottom; the order of the checks is the
order below, and each failure has one reason of its own (`REASONS`) so a test can tell which rule
fired.

What it refuses to do, and why (RFC 8725, the JWT best current practice):
- it never lets the token choose whom to trust: the issuers come from configuration, and a token
  naming another issuer is refused before any key is fetched;
- it never lets the token choose the algorithm: the key's own JWK names it, and it must be one of
  those it was started with (`algorithms`: by default the three the platform signs with,
  `PINNED_ALGORITHMS`; `--algorithm` pins the organization's one), so no `alg: none`, and no HS256
  keyed with a public key;
- it never follows keys embedded in or pointed to by the token (`jwk`, `jku`, `x5u`, `x5c`);
- it pins the token's type: an assertion's `typ` is "JWT", so a session token (its own `typ`)
  can never pass for one, even minted with a tool's audience;
- it does not take pyjwt's lenient defaults: every claim is required, `aud` must be exactly the
  tool the route serves (a string, not a list containing it), leeway is a few seconds, and the
  assertion may not live longer than the platform's thirty seconds;
- for the tools it is told require the person's approval (`requires_approval`), it refuses an
  assertion without an `approval` claim (the id of the approval, a non-empty string): only a call
  the person approved carries one, so the model cannot place an order on its own say-so;
- for the tools it is told take each assertion once (`single_use`), it refuses a `jti` it has
  already taken, until that assertion has expired: a captured approved assertion cannot repeat the
  call (docs/approvals.md).

The `broken` modes each switch off exactly one of these checks. They exist so the conformance kit
can prove its negative cases fail against a backend that forgot that one rule; never run them for
real traffic.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import threading
import time
from collections.abc import Iterable
from typing import Any, Callable

import jwt

from mock_backend.jwks import PINNED_ALGORITHMS, REFETCH_COOLDOWN_SECONDS, Fetcher, IssuerKeys
from mock_backend.limits import ASSERTION_LIFETIME_SECONDS, CLOCK_SKEW_SECONDS
from mock_backend.modes import BROKEN_MODES  # each disables one check (see the module docstring)

#: One reason per verification failure, answered as `401 {"error": "invalid_token", "reason": R}`.
REASONS = (
    "missing-token",      # no `Authorization: Bearer …` header
    "malformed",          # not a compact JWS with JSON header and payload, or a claim of the wrong type
    "forbidden-header",   # the token embeds or points to its own key (`jwk`, `jku`, `x5u`, `x5c`)
    "wrong-type",         # the header's `typ` is not an assertion's ("JWT"): a session token, or none
    "wrong-issuer",       # `iss` is not one of the issuers this backend was started with
    "bad-algorithm",      # the header's `alg` is not pinned, or differs from the key's JWK `alg`
    "unknown-key",        # no key of the issuer has this `kid`, even after one refetch
    "bad-signature",      # the signature does not verify (includes a payload changed after signing)
    "missing-claim",      # one of `REQUIRED_CLAIMS` is absent
    "expired",            # `exp` has passed (beyond the leeway)
    "not-yet-valid",      # `iat` or `nbf` is in the future (beyond the leeway)
    "wrong-audience",     # `aud` is not exactly the tool this route serves
    "lifetime-too-long",  # `exp - iat` is more than the assertion lifetime plus leeway
    "missing-approval",   # the tool requires the person's approval and `approval` is absent, empty or not a string
    "replayed",           # the tool takes each assertion once, and this `jti` was taken before
)


#: Claims every call assertion carries; a token missing any of them is refused.
REQUIRED_CLAIMS = ("exp", "iat", "iss", "aud", "sub", "turn", "jti")

#: The claim an approved call's assertion carries: the id of the person's approval.
APPROVAL_CLAIM = "approval"

#: The `typ` header of a call assertion; a session token's is "toolgate-session+jwt" (RFC 8725 §3.11).
ASSERTION_TYPE = "JWT"

#: Header members by which a token brings its own key: trusting them lets anyone sign.
FORBIDDEN_HEADERS = frozenset({"jwk", "jku", "x5u", "x5c"})

#: What a key id may look like. A `kid` that is a path or SQL is refused before any fetch.
KID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]{1,128}")

# pyjwt's exceptions, most specific first (an InvalidSignatureError is also a DecodeError).
_PYJWT_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (jwt.InvalidSignatureError, "bad-signature"),
    (jwt.ExpiredSignatureError, "expired"),
    (jwt.ImmatureSignatureError, "not-yet-valid"),
    (jwt.InvalidAudienceError, "wrong-audience"),
    (jwt.InvalidIssuerError, "wrong-issuer"),
    (jwt.MissingRequiredClaimError, "missing-claim"),
    (jwt.InvalidAlgorithmError, "bad-algorithm"),
    (jwt.PyJWTError, "malformed"),  # DecodeError, InvalidIssuedAtError, InvalidSubjectError, …
)


class Rejected(Exception):
    """The assertion was refused; `reason` is one of `REASONS`."""

    def __init__(self, reason: str) -> None:
        if reason not in REASONS:
            raise ValueError(f"not a rejection reason: {reason!r}")
        super().__init__(reason)
        self.reason = reason


def reason_for(error: Exception) -> str:
    """The reason for one of pyjwt's exceptions."""
    for kind, reason in _PYJWT_REASONS:
        if isinstance(error, kind):
            return reason
    raise error


class Verifier:
    """Checks call assertions against the issuers this backend trusts."""

    def __init__(self, issuers: Iterable[str], broken: str | None = None,
                 fetcher: Fetcher | None = None,
                 refetch_cooldown: float = REFETCH_COOLDOWN_SECONDS,
                 requires_approval: Iterable[str] = (), *,
                 algorithms: Iterable[str] = PINNED_ALGORITHMS, single_use: Iterable[str] = (),
                 clock: Callable[[], float] = time.monotonic) -> None:
        if broken is not None and broken not in BROKEN_MODES:
            raise ValueError(f"unknown broken mode {broken!r}; choose one of: {', '.join(BROKEN_MODES)}")
        self.algorithms = tuple(algorithms)
        unknown = [alg for alg in self.algorithms if alg not in PINNED_ALGORITHMS]
        if unknown or not self.algorithms:
            raise ValueError(f"an algorithm to pin is one of {', '.join(PINNED_ALGORITHMS)}, not {unknown or 'none'}")
        self.broken = broken
        #: The tools that take each assertion once, and the `jti`s taken so far with when each expires.
        self.single_use = frozenset(single_use)
        self._taken: dict[str, float] = {}
        self._taken_lock = threading.Lock()
        #: The tools whose calls must carry the person's approval.
        self.requires_approval = frozenset(requires_approval)
        self._fetcher = fetcher
        self._cooldown = refetch_cooldown
        self._keys = {issuer: IssuerKeys(issuer, fetcher, cooldown=refetch_cooldown, clock=clock) for issuer in issuers}
        if not self._keys:
            raise ValueError("at least one issuer must be trusted")

    def verify(self, authorization: str | None, tool: str) -> dict[str, Any] | None:
        """The verified claims of the request's assertion for `tool`, or `Rejected`.

        Returns None only in the broken `no-auth` mode, for a request with no token at all.
        """
        token = bearer_token(authorization)
        if token is None:
            if self.broken == "no-auth":
                return None
            raise Rejected("missing-token")

        header, unverified = peek(token)
        if FORBIDDEN_HEADERS & header.keys():
            raise Rejected("forbidden-header")  # and nothing it names is fetched
        if header.get("typ") != ASSERTION_TYPE:
            raise Rejected("wrong-type")

        # The token's `iss` only selects among issuers trusted by configuration.
        issuer = unverified.get("iss")
        if issuer is None:
            raise Rejected("missing-claim")
        if not isinstance(issuer, str):
            raise Rejected("malformed")
        keys = self._issuer_keys(issuer)

        alg = header.get("alg")
        if self.broken == "accept-alg-none" and str(alg).lower() == "none":
            return self._claims(token, tool, issuer)
        if self.broken == "accept-hs256" and alg == "HS256":
            _check_hmac_with_public_keys(token, keys.all())
            return self._claims(token, tool, issuer)
        if alg not in self.algorithms:
            raise Rejected("bad-algorithm")
        if self.broken == "skip-signature":
            return self._claims(token, tool, issuer)

        kid = header.get("kid")
        if not isinstance(kid, str) or not KID_PATTERN.fullmatch(kid):
            raise Rejected("unknown-key")  # without fetching: no key could have such a name
        key = keys.get(kid)
        if key is None:
            raise Rejected("unknown-key")
        # The key's JWK decides the algorithm; the header must agree with it.
        if alg != key.alg:
            raise Rejected("bad-algorithm")
        return self._claims(token, tool, issuer, key.key, key.alg)

    def _issuer_keys(self, issuer: str) -> IssuerKeys:
        if issuer in self._keys:
            return self._keys[issuer]
        if self.broken == "any-issuer":
            # The classic mistake: keys fetched from wherever the token says. Anyone can sign.
            # (Unbounded, like the mistake itself: this mode exists for negative tests only.)
            return self._keys.setdefault(issuer, IssuerKeys(issuer, self._fetcher, cooldown=self._cooldown))
        raise Rejected("wrong-issuer")

    def _claims(self, token: str, tool: str, issuer: str,
                key: Any = None, alg: str | None = None) -> dict[str, Any]:
        """Decode, verifying the signature when a key is given, and check every claim."""
        options = {
            "verify_signature": key is not None,
            "verify_exp": self.broken != "accept-expired",
            "verify_nbf": True,
            "verify_iat": True,
            "verify_aud": self.broken != "skip-audience",
            "verify_iss": True,
            "verify_sub": True,
            "verify_jti": True,
            "require": list(REQUIRED_CLAIMS),
            "strict_aud": True,  # `aud` must be the string, not a list that contains it
        }
        try:
            claims = jwt.decode(token, key, algorithms=[alg] if alg else None, audience=tool,
                                issuer=issuer, leeway=CLOCK_SKEW_SECONDS, options=options)
        except jwt.PyJWTError as error:
            raise Rejected(reason_for(error)) from error
        if not isinstance(claims["turn"], str) or not isinstance(claims.get("anon", False), bool):
            raise Rejected("malformed")
        # pyjwt would accept a year-long assertion; the platform's live thirty seconds.
        if claims["exp"] - claims["iat"] > ASSERTION_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS:
            raise Rejected("lifetime-too-long")
        # Last, once the assertion is known to be the platform's: only then does its approval mean anything.
        if tool in self.requires_approval and not has_approval(claims):
            raise Rejected("missing-approval")
        if tool in self.single_use:
            self._take(claims)
        return claims

    def _take(self, claims: dict[str, Any]) -> None:
        """Take the assertion's `jti` once: Rejected("replayed") if it was taken before and has not yet expired."""
        now = time.time()
        with self._taken_lock:
            # Forget what has expired: it is refused as expired from now on, so memory holds 35 s of calls at most.
            for jti in [jti for jti, until in self._taken.items() if until < now]:
                del self._taken[jti]
            if not isinstance(claims["jti"], str) or claims["jti"] in self._taken:
                raise Rejected("replayed")
            self._taken[claims["jti"]] = claims["exp"] + CLOCK_SKEW_SECONDS


def has_approval(claims: dict[str, Any]) -> bool:
    """Whether verified claims carry the person's approval: an `approval` claim that is a non-empty string."""
    approval = claims.get(APPROVAL_CLAIM)
    return isinstance(approval, str) and approval != ""


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None when there is none."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def peek(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and payload, unverified: only to choose which trusted issuer and key to check with."""
    try:
        header = jwt.get_unverified_header(token)
        payload = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as error:
        raise Rejected("malformed") from error
    return header, payload


def _check_hmac_with_public_keys(token: str, keys: list[Any]) -> None:
    """The `accept-hs256` confusion: an HMAC keyed with a public key's PEM, which anyone can compute."""
    signing_input, _, signature = token.rpartition(".")
    try:
        given = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    except ValueError as error:
        raise Rejected("malformed") from error
    for key in keys:
        expected = hmac.new(key.public_pem(), signing_input.encode("utf-8"), hashlib.sha256).digest()
        if hmac.compare_digest(expected, given):
            return
    raise Rejected("bad-signature")
