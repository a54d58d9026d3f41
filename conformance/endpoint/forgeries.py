"""The forged calls an endpoint must refuse, as tables: here the forgeries of the signature and key.

Each row is one case, `endpoint/<name>-rejected`: a title, the requirement it checks, where the
spec or the threat model says so, and how to forge the calls. A forgery is a correct assertion with
exactly one thing wrong, so only the check that matches it can catch it; some rows try that one
thing several ways (every spelling of `none`), and the case reports each attempt the endpoint let
through. An attempt may also set traps, URLs the token points to that nothing may fetch: refusing
after fetching a token's `jku` is still following it. The forgeries of the claims are in claims.py.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Callable

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from conformance.case import Check, SpecRef, Verdict
from conformance.endpoint.target import EndpointTarget
from conformance.issuer import KitIssuer
from conformance.tokens import ALGORITHMS, ASSERTION_TYPE, SigningKey, compact, hs256, with_payload

#: The answers that mean "refused": the endpoint did not take the caller to be who it claims.
REFUSALS = (401, 403)

HOW_TOOLS_RUN = "spec/how-tools-run.txt"
THREATS = "THREATS.md"

#: Files whose content anyone knows, by the kid that walks a key directory to them: what a backend
#: that reads keys from files named by `kid` would key its HMAC with. (pyjwt and jose refuse an
#: empty HMAC key, so /dev/null alone would not catch a pyjwt backend; Linux's ostype is "Linux".)
PATH_KIDS = {"../../../../../../../../dev/null": b"",
             "../../../../../../../../proc/sys/kernel/ostype": b"Linux\n"}
#: What a backend that looks keys up in SQL by `kid` gets for this one: the secret it selects.
SQL_SECRET = "conformance-kit-secret-selected-by-sql"
SQL_KID = f"nokey' UNION SELECT '{SQL_SECRET}' -- "


@dataclass(frozen=True)
class Trap:
    """A URL on one of the kit's issuers that a forged token points to, and what points to it."""

    issuer: KitIssuer
    url: str
    what: str


@dataclass(frozen=True)
class Attempt:
    """One forged call: what is wrong with it (for the report), its token, whose subject it fills,
    and the traps it sets (URLs that must never be fetched)."""

    label: str
    token: str | None
    subject: str | None = None
    traps: tuple[Trap, ...] = ()


@dataclass(frozen=True)
class Forgery:
    """One row of a table: a case that sends forged calls and expects every one refused."""

    name: str
    title: str
    requirement: str
    spec: tuple[SpecRef, ...]
    forge: Callable[[EndpointTarget], list[Attempt]]


def nothing_accepted(target: EndpointTarget) -> Verdict | None:
    """An errored verdict when the endpoint refuses even a correct call, else None.

    An endpoint that refuses everything refuses every forgery too; that proves nothing, so the
    forgery cases are reported as errors rather than passes.
    """
    answer = target.valid_answer()
    if answer.accepted:
        return None
    return Verdict.errored(f"nothing was accepted, so a refusal proves nothing: a correctly signed call "
                           f"got {answer.describe()} (see endpoint/valid-call-accepted)")


def check_refused(forgery: Forgery, target: EndpointTarget) -> Verdict:
    """Send every attempt of `forgery`; each must be answered 401 or 403, its traps untouched."""
    unproven = nothing_accepted(target)
    if unproven is not None:
        return unproven
    check = Check()
    for attempt in forgery.forge(target):
        answer = target.send(attempt.token, attempt.subject)
        check.expect(answer.status in REFUSALS, f"answer to {attempt.label}",
                     " or ".join(map(str, REFUSALS)), answer.describe())
        for trap in attempt.traps:
            fetched = trap.issuer.fetches_of(trap.url)
            check.expect(fetched == 0, f"fetches of {trap.url} ({trap.what})", "none: never fetched",
                         f"fetched {fetched} time(s)")
    return check.verdict()


def _bad_signature(target: EndpointTarget) -> list[Attempt]:
    impostor = SigningKey.generate(target.algorithm)
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


#: Algorithms the organization does not sign with that its own key can still make: a backend taking the algorithm
#: from the token, or allowing a family of them (jose with no `algorithms`, for an RSA key), accepts them.
SAME_KEY_ALGORITHMS = {"RS256": ("RS384", "RS512", "PS256", "PS384", "PS512")}
#: What an ECDSA P-256 or an Ed25519 key can be made to sign under another name: an ECDSA signature over a longer
#: hash (older pyjwt took ES384 from any EC key), and Ed25519 named as RFC 9864 names it.
RAW_ALGORITHMS = {"ES256": (("ES384", "sha384"), ("ES512", "sha512")), "EdDSA": (("Ed25519", None),)}


def _other_algorithm(target: EndpointTarget) -> list[Attempt]:
    key = target.issuer.key
    attempts = [Attempt(f"{alg} signed by the trusted key (the organization signs with {key.alg})",
                        key.sign(target.claims(), alg=alg))
                for alg in SAME_KEY_ALGORITHMS.get(key.alg, ())]
    attempts += [Attempt(f"{alg} signed by the trusted key (the organization signs with {key.alg})",
                         key.sign_raw({"alg": alg, "kid": key.kid, "typ": ASSERTION_TYPE}, target.claims(), digest))
                 for alg, digest in RAW_ALGORITHMS.get(key.alg, ())]
    attempts += [Attempt(f"{alg} signed by a key of that algorithm under the trusted kid",
                         SigningKey.generate(alg).sign(target.claims(), kid=key.kid))
                 for alg in ALGORITHMS if alg != key.alg]
    return attempts


def _unknown_kid(target: EndpointTarget) -> list[Attempt]:
    stranger = SigningKey.generate(target.algorithm)
    return [Attempt(f"an assertion signed by an unpublished key (kid {stranger.kid})",
                    stranger.sign(target.claims()))]


def _der_base64(key: SigningKey) -> str:
    pem = key.certificate_pem()
    der = x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)
    return base64.b64encode(der).decode("ascii")


def _embedded_key(target: EndpointTarget) -> list[Attempt]:
    stranger, untrusted = SigningKey.generate(target.algorithm), target.untrusted
    jku, x5u = untrusted.trap("jku"), untrusted.trap("x5u")
    return [
        Attempt("an assertion signed by an unpublished key embedded in its jwk header",
                stranger.sign(target.claims(), headers={"jwk": stranger.public_jwk()})),
        Attempt("an assertion signed by a key published only at its jku header's URL",
                untrusted.key.sign(target.claims(), headers={"jku": jku}),
                traps=(Trap(untrusted, jku, "the token's jku"),)),
        Attempt("an assertion signed by a key certified only at its x5u header's URL",
                untrusted.key.sign(target.claims(), headers={"x5u": x5u}),
                traps=(Trap(untrusted, x5u, "the token's x5u"),)),
        Attempt("an assertion signed by an unpublished key whose certificate is in its x5c header",
                stranger.sign(target.claims(), headers={"x5c": [_der_base64(stranger)]})),
    ]


def _kid_injection(target: EndpointTarget) -> list[Attempt]:
    untrusted = target.untrusted
    url_kid = untrusted.trap("kid")
    return [
        *[Attempt(f"HS256 keyed with {content!r} under kid {kid!r} (a path to a file holding that)",
                  hs256({"kid": kid, "typ": "JWT"}, target.claims(), content))
          for kid, content in PATH_KIDS.items()],
        Attempt(f"HS256 keyed with {SQL_SECRET!r} under kid {SQL_KID!r} (SQL selecting that secret)",
                hs256({"kid": SQL_KID, "typ": "JWT"}, target.claims(), SQL_SECRET.encode())),
        Attempt("an assertion signed by an untrusted key whose kid is the URL of its key set",
                untrusted.key.sign(target.claims(), kid=url_kid),
                traps=(Trap(untrusted, url_kid, "the token's kid"),)),
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


SIGNATURE_FORGERIES: tuple[Forgery, ...] = (
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
        "other-algorithm", "Assertions in another algorithm than the organization's are refused",
        "An endpoint pins its organization's one algorithm and refuses, with 401 or 403, an assertion in any other: "
        "signed by the trusted key under another algorithm's name, or by a key of another algorithm the platform "
        "offers under the trusted kid.",
        (SpecRef(THREATS, "Verifiers pin the algorithms (ES256 by default) and never read them "
                          "from the token"),),
        _other_algorithm,
    ),
    Forgery(
        "unknown-kid", "Assertions signed by an unpublished key are refused",
        "An endpoint verifies only against the keys its issuer publishes and refuses, with 401 or "
        "403, an assertion signed by any other key.",
        (SpecRef(HOW_TOOLS_RUN, "Your backend fetches that organization’s public keys from "
                                "{iss}/.well-known/jwks.json and verifies the signature against them."),),
        _unknown_kid,
    ),
    Forgery(
        "embedded-key", "Keys a token embeds or points to are never used nor fetched",
        "An endpoint refuses, with 401 or 403, an assertion signed by a key it embeds (jwk, x5c) or "
        "points to (jku, x5u), and never fetches the URL such a header names.",
        (SpecRef(THREATS, "an embedded `jwk`, `jku` or `x5u` header"),
         SpecRef(THREATS, "are all refused, with no fetch made")),
        _embedded_key,
    ),
    Forgery(
        "kid-injection", "A kid that is a path, SQL or a URL is refused",
        "An endpoint refuses, with 401 or 403, an assertion whose kid is a file path, SQL or a URL, "
        "whatever key that kid would lead a careless lookup to, and never fetches a kid.",
        (SpecRef(THREATS, "a `kid` that is a path or SQL"),
         SpecRef(THREATS, "are all refused, with no fetch made")),
        _kid_injection,
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
