"""The forgeries of the claims and the token's type: correctly signed by the trusted key, one claim wrong.

pyjwt's defaults take most of these (THREATS): a token with no `exp`, a lifetime of a year, no
`iat`, `jti` or `sub`, any `typ`. An endpoint passes only when it requires every claim, bounds the
lifetime, keeps its leeway to a few seconds and pins the assertion's `typ`.
"""
from __future__ import annotations

from typing import Any

from conformance.case import SpecRef
from conformance.endpoint.forgeries import HOW_TOOLS_RUN, THREATS, Attempt, Forgery
from conformance.endpoint.target import EndpointTarget
from conformance.limits import (
    ASSERTION_LIFETIME_SECONDS,
    DOCUMENTED_LEEWAY_SECONDS,
    EXPIRED_BY_SECONDS,
    LONG_LIFETIMES_SECONDS,
)
from conformance.tokens import SESSION_TOKEN_TYPE

CONTRACT = "CONTRACT.md"

#: Claims an endpoint must require, besides `exp` (a case of its own): THREATS' list.
REQUIRED = ("iat", "jti", "sub", "iss", "aud")


def _shifted(target: EndpointTarget, seconds: int) -> dict[str, Any]:
    """Fresh claims minted `seconds` ago (their lifetime kept)."""
    claims = target.claims()
    claims["iat"] -= seconds
    claims["exp"] -= seconds
    return claims


def _sign(target: EndpointTarget, claims: dict[str, Any], **headers: Any) -> str:
    return target.issuer.key.sign(claims, headers=headers or None)


def _expired(target: EndpointTarget) -> list[Attempt]:
    # Minted three lifetimes ago, so it expired two lifetimes ago: far past any sane leeway.
    shift = 3 * ASSERTION_LIFETIME_SECONDS
    return [Attempt(f"an assertion that expired {shift - ASSERTION_LIFETIME_SECONDS} s ago",
                    _sign(target, _shifted(target, shift)))]


def _just_expired(target: EndpointTarget) -> list[Attempt]:
    claims = _shifted(target, ASSERTION_LIFETIME_SECONDS + EXPIRED_BY_SECONDS)
    return [Attempt(f"an assertion that expired {EXPIRED_BY_SECONDS} s ago", _sign(target, claims))]


def _no_expiry(target: EndpointTarget) -> list[Attempt]:
    claims = target.claims()
    del claims["exp"]
    return [Attempt("an assertion with no exp", _sign(target, claims))]


def _long_lifetime(target: EndpointTarget) -> list[Attempt]:
    attempts = []
    for lifetime in LONG_LIFETIMES_SECONDS:
        claims = target.claims()
        claims["exp"] = claims["iat"] + lifetime
        attempts.append(Attempt(f"an assertion living {lifetime:,} s (exp - iat)", _sign(target, claims)))
    return attempts


def _missing_claim(target: EndpointTarget) -> list[Attempt]:
    attempts = []
    for name in REQUIRED:
        claims = target.claims()
        del claims[name]
        attempts.append(Attempt(f"an assertion with no {name}", _sign(target, claims)))
    return attempts


def _wrong_audience(target: EndpointTarget) -> list[Attempt]:
    tool = target.call.tool
    other = f"{tool}_other"
    return [
        Attempt(f"aud {other!r}", _sign(target, {**target.claims(), "aud": other})),
        Attempt(f"aud [{other!r}, {tool!r}] (a list that merely contains this tool)",
                _sign(target, {**target.claims(), "aud": [other, tool]})),
    ]


def _wrong_issuer(target: EndpointTarget) -> list[Attempt]:
    untrusted = target.untrusted
    claims = {**target.claims(), "iss": untrusted.url}
    return [Attempt(f"iss {untrusted.url} (an issuer serving its own key set)", untrusted.key.sign(claims))]


def _other_issuer(target: EndpointTarget) -> list[Attempt]:
    neighbour = f"{target.issuer.url}/orgs/another"
    return [Attempt(f"iss {iss} ({what}), signed by the trusted key", _sign(target, {**target.claims(), "iss": iss}))
            for iss, what in ((target.untrusted.url, "another issuer"),
                              (neighbour, "a neighbour of the trusted issuer, beginning with its URL"))]


def _session_token(target: EndpointTarget) -> list[Attempt]:
    return [
        Attempt(f"a token typed {SESSION_TOKEN_TYPE!r} (a session token's typ) carrying this tool's aud",
                _sign(target, target.claims(), typ=SESSION_TOKEN_TYPE)),
        Attempt("an assertion with no typ header", _sign(target, target.claims(), typ=None)),
    ]


CLAIM_FORGERIES: tuple[Forgery, ...] = (
    Forgery(
        "expired", "Expired assertions are refused",
        "An endpoint refuses an assertion whose exp has passed, with 401 or 403.",
        (SpecRef(HOW_TOOLS_RUN, "exp, the expiry: thirty seconds after the call is minted. "
                                "A leaked assertion is worthless almost immediately"),),
        _expired,
    ),
    Forgery(
        "just-expired", "Assertions expired a few seconds ago are refused: leeway is a few seconds",
        f"An endpoint refuses, with 401 or 403, an assertion whose exp passed {EXPIRED_BY_SECONDS} s ago: "
        "its clock leeway is a few seconds, never a minute.",
        (SpecRef(THREATS, "keep leeway to a few seconds"),
         SpecRef(HOW_TOOLS_RUN, "A leaked assertion is worthless almost immediately")),
        _just_expired,
    ),
    Forgery(
        "no-expiry", "Assertions without an expiry are refused",
        "An endpoint requires exp and refuses, with 401 or 403, an assertion that has none.",
        (SpecRef(THREATS, "pyjwt's defaults accept a token with no `exp`"),
         SpecRef(THREATS, "Require `exp`, `iat`, `iss`, `aud`, `sub`, `jti`")),
        _no_expiry,
    ),
    Forgery(
        "long-lifetime", "Assertions living longer than thirty seconds are refused",
        f"An endpoint refuses, with 401 or 403, an assertion whose exp - iat is more than "
        f"{ASSERTION_LIFETIME_SECONDS} s plus a few seconds of leeway: just past it "
        f"({LONG_LIFETIMES_SECONDS[0]} s, the documented {DOCUMENTED_LEEWAY_SECONDS} s of leeway twice over) "
        f"as well as far past it ({LONG_LIFETIMES_SECONDS[1]} s, a year).",
        (SpecRef(THREATS, "check `exp - iat` is at most the lifetime plus leeway"),
         SpecRef(HOW_TOOLS_RUN, "exp, the expiry: thirty seconds after the call is minted.")),
        _long_lifetime,
    ),
    Forgery(
        "missing-claim", "Assertions missing a required claim are refused",
        f"An endpoint requires {', '.join(REQUIRED)} and refuses, with 401 or 403, an assertion "
        "missing any one of them.",
        (SpecRef(THREATS, "Require `exp`, `iat`, `iss`, `aud`, `sub`, `jti`"),),
        _missing_claim,
    ),
    Forgery(
        "wrong-audience", "Assertions for another tool are refused",
        "An endpoint refuses, with 401 or 403, an assertion whose aud is not exactly its own "
        "tool's name, including a list that merely contains it.",
        (SpecRef(HOW_TOOLS_RUN, "so an assertion minted for one tool can never be pointed at another"),
         SpecRef(THREATS, "an `aud` list that merely contains the tool's name")),
        _wrong_audience,
    ),
    Forgery(
        "wrong-issuer", "Assertions from an untrusted issuer are refused",
        "An endpoint refuses, with 401 or 403, an assertion from an issuer it was not configured "
        "to trust, even when that issuer's own key set verifies it.",
        (SpecRef(HOW_TOOLS_RUN, "iss, the issuer: your organization’s URL on the platform."),
         SpecRef(THREATS, "The issuer comes from configuration, never from the token")),
        _wrong_issuer,
    ),
    Forgery(
        "other-issuer", "Assertions signed by the trusted key but naming another issuer are refused",
        "An endpoint compares iss with the issuer it was configured to trust, exactly, and refuses, with 401 or "
        "403, an assertion naming another issuer (or a neighbour whose URL begins with the trusted one's), even "
        "signed by the trusted key.",
        (SpecRef(THREATS, "The issuer comes from configuration, never from the token"),
         SpecRef(THREATS, "Require `exp`, `iat`, `iss`, `aud`, `sub`, `jti`")),
        _other_issuer,
    ),
    Forgery(
        "session-token", "A session token, or a token with no typ, is never taken for an assertion",
        f"An endpoint pins the assertion's typ (JWT) and refuses, with 401 or 403, a token typed "
        f"{SESSION_TOKEN_TYPE} or untyped, even signed by the trusted key for this tool.",
        (SpecRef(THREATS, "A session token and a call assertion must never be taken for each other "
                          "(different `aud`, and a distinct `typ`)"),
         SpecRef(CONTRACT, "header `alg` (ES256 by default), `kid`, `typ: \"JWT\"`")),
        _session_token,
    ),
)
