"""The forged calls an endpoint must refuse, as one table.

Each row is one case, `endpoint/<name>-rejected`: a title, the requirement it checks, where the
spec says so, and how to forge the calls. A forgery is a correct assertion with exactly one thing
wrong, so only the check that matches it can catch it; some rows try that one thing several ways
(every spelling of `none`), and the case reports each attempt the endpoint let through.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from conformance.case import Check, SpecRef, Verdict
from conformance.endpoint.target import EndpointTarget
from conformance.issuer import JWKS_PATH
from conformance.limits import ASSERTION_LIFETIME_SECONDS
from conformance.tokens import SigningKey, compact, hs256, with_payload

#: The answers that mean "refused": the endpoint did not take the caller to be who it claims.
REFUSALS = (401, 403)

HOW_TOOLS_RUN = "spec/how-tools-run.txt"
THREATS = "THREATS.md"


@dataclass(frozen=True)
class Attempt:
    """One forged call: what is wrong with it (for the report), its token, whose subject it fills."""

    label: str
    token: str | None
    subject: str | None = None


@dataclass(frozen=True)
class Forgery:
    """One row of the table: a case that sends forged calls and expects every one refused."""

    name: str
    title: str
    requirement: str
    spec: tuple[SpecRef, ...]
    forge: Callable[[EndpointTarget], list[Attempt]]


def check_refused(forgery: Forgery, target: EndpointTarget) -> Verdict:
    """Send every attempt of `forgery`; each must be answered 401 or 403."""
    check = Check()
    for attempt in forgery.forge(target):
        answer = target.send(attempt.token, attempt.subject)
        check.expect(answer.status in REFUSALS, f"answer to {attempt.label}",
                     " or ".join(map(str, REFUSALS)), answer.describe())
    return check.verdict()


def _expired(target: EndpointTarget) -> list[Attempt]:
    claims = target.claims()
    # Minted three lifetimes ago, so it expired two lifetimes ago: far past any sane leeway.
    shift = 3 * ASSERTION_LIFETIME_SECONDS
    claims["iat"] -= shift
    claims["exp"] -= shift
    label = f"an assertion that expired {shift - ASSERTION_LIFETIME_SECONDS} s ago"
    return [Attempt(label, target.issuer.key.sign(claims))]


def _wrong_audience(target: EndpointTarget) -> list[Attempt]:
    tool = target.call.tool
    other = f"{tool}_other"
    alone = {**target.claims(), "aud": other}
    listed = {**target.claims(), "aud": [other, tool]}
    return [
        Attempt(f"aud {other!r}", target.issuer.key.sign(alone)),
        Attempt(f"aud [{other!r}, {tool!r}] (a list that merely contains this tool)",
                target.issuer.key.sign(listed)),
    ]


def _wrong_issuer(target: EndpointTarget) -> list[Attempt]:
    untrusted = target.untrusted
    claims = {**target.claims(), "iss": untrusted.url}
    return [Attempt(f"iss {untrusted.url} (an issuer serving its own key set)",
                    untrusted.key.sign(claims))]


def _bad_signature(target: EndpointTarget) -> list[Attempt]:
    impostor = SigningKey.generate()
    token = impostor.sign(target.claims(), kid=target.issuer.key.kid)
    return [Attempt("an assertion signed by another key under the published kid", token)]


def _alg_none(target: EndpointTarget) -> list[Attempt]:
    kid = target.issuer.key.kid
    return [
        Attempt(f"alg {alg!r} with no signature",
                compact({"alg": alg, "kid": kid, "typ": "JWT"}, target.claims()))
        for alg in ("none", "None", "NONE", "nOnE")
    ]


def _hs256_public_key(target: EndpointTarget) -> list[Attempt]:
    key = target.issuer.key
    header = {"kid": key.kid, "typ": "JWT"}
    pem = key.public_pem()
    return [
        Attempt("HS256 keyed with the issuer's public key PEM", hs256(header, target.claims(), pem)),
        Attempt("HS256 keyed with that PEM without its final newline",
                hs256(header, target.claims(), pem.strip())),
    ]


def _unknown_kid(target: EndpointTarget) -> list[Attempt]:
    stranger = SigningKey.generate()
    untrusted = target.untrusted
    jku = f"{untrusted.url}{JWKS_PATH}"
    return [
        Attempt(f"an assertion signed by an unpublished key (kid {stranger.kid})",
                stranger.sign(target.claims())),
        Attempt("the same, with that key embedded in a jwk header",
                stranger.sign(target.claims(), headers={"jwk": stranger.public_jwk()})),
        Attempt("an assertion signed by a key published only at its jku header's URL",
                untrusted.key.sign(target.claims(), headers={"jku": jku})),
    ]


def _tampered_payload(target: EndpointTarget) -> list[Attempt]:
    claims = target.claims()
    token = target.issuer.key.sign(claims)
    # The attack the subject exists to stop: someone else's identity, their path, same signature.
    other = f"{target.call.subject}-someone-else"
    return [Attempt(f"a signed assertion whose sub was changed to {other!r} afterwards",
                    with_payload(token, {**claims, "sub": other}), subject=other)]


def _no_token(target: EndpointTarget) -> list[Attempt]:
    return [Attempt("a call with no Authorization header", None)]


FORGERIES: tuple[Forgery, ...] = (
    Forgery(
        "expired", "Expired assertions are refused",
        "An endpoint refuses an assertion whose exp has passed, with 401 or 403.",
        (SpecRef(HOW_TOOLS_RUN, "exp, the expiry: thirty seconds after the call is minted. "
                                "A leaked assertion is worthless almost immediately"),),
        _expired,
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
        "bad-signature", "Assertions with a bad signature are refused",
        "An endpoint refuses, with 401 or 403, an assertion whose signature does not verify "
        "against the key its kid names.",
        (SpecRef(HOW_TOOLS_RUN, "Your backend verifies the signature"),),
        _bad_signature,
    ),
    Forgery(
        "alg-none", "Unsigned (alg none) assertions are refused",
        "An endpoint refuses, with 401 or 403, an unsigned assertion, whatever the spelling of none.",
        (SpecRef(THREATS, "`alg: none` in any spelling"),),
        _alg_none,
    ),
    Forgery(
        "hs256-public-key", "HS256 keyed with the public key is refused",
        "An endpoint pins the algorithm and refuses, with 401 or 403, an HS256 assertion keyed "
        "with the issuer's public key.",
        (SpecRef(THREATS, "Verifiers pin the algorithms (ES256 by default) and never read them "
                          "from the token"),
         SpecRef(THREATS, "HS256 keyed with the public key")),
        _hs256_public_key,
    ),
    Forgery(
        "unknown-kid", "Assertions signed by an unpublished key are refused",
        "An endpoint verifies only against the keys its issuer publishes and refuses, with 401 or "
        "403, an assertion signed by any other key, however the token offers it.",
        (SpecRef(HOW_TOOLS_RUN, "Your backend fetches that organization’s public keys from "
                                "{iss}/.well-known/jwks.json and verifies the signature against them."),
         SpecRef(THREATS, "an embedded `jwk`, `jku` or `x5u` header")),
        _unknown_kid,
    ),
    Forgery(
        "tampered-payload", "Assertions changed after signing are refused",
        "An endpoint refuses, with 401 or 403, an assertion whose payload was changed after it "
        "was signed.",
        (SpecRef(HOW_TOOLS_RUN, "Your backend verifies the signature"),),
        _tampered_payload,
    ),
    Forgery(
        "no-token", "Calls without an assertion are refused",
        "An endpoint refuses, with 401 or 403, a call that carries no assertion.",
        (SpecRef(HOW_TOOLS_RUN, "a JSON Web Token sent as a standard Authorization: Bearer token, "
                                "that your backend should verify before doing any work"),),
        _no_token,
    ),
)
