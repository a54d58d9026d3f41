"""`assertion/…`: the signed assertion every call carries, checked as an integrator's backend would.

The cases call the mock's echo, which shows the exact request the platform sent, take the Bearer
token from it, and check it against the key set at `{iss}/.well-known/jwks.json`, the issuer being
the organization's (as its session tokens name it), never the token's word for it.
"""
from __future__ import annotations

import time
from typing import Any

from conformance.case import Check, Verdict
from conformance.limits import ASSERTION_LIFETIME_SECONDS
from conformance.platform.assertions import (
    JWKS_PATH,
    Inspected,
    check_claim_types,
    fetch_jwks,
    verify_signature,
)
from conformance.platform.budgets import CLOCK_TOLERANCE_SECONDS
from conformance.platform.client import (
    SUBJECT_IN_PATH,
    PlatformTarget,
    SetupRefused,
    bearer,
    brief,
    echoed,
    tool,
)
from conformance.platform.suite import SUITE, contract, running, threats

#: Members of a JWK that belong to a private key (EC and RSA), or to a symmetric one.
PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "oth", "k")


def echo_project(target: PlatformTarget, slug: str, *, per_user: bool = False, count: int = 1) -> list[str]:
    """Publish `count` echo tools (per-user ones take the subject in the path); their names."""
    names = [target.name(slug, str(i)) for i in range(count)]
    definitions = [
        tool(name, target.mock(name, "echo/{subject}"), scope="per_user", parameters=[SUBJECT_IN_PATH])
        if per_user else tool(name, target.mock(name, "echo"))
        for name in names
    ]
    target.publish_project(target.project(slug), definitions)
    return names


def received(target: PlatformTarget, result: dict[str, Any]) -> tuple[dict[str, Any], Inspected]:
    """What the endpoint saw and the assertion it was given (from the mock's call record, which the echo names);
    SetupRefused if the call did not get there."""
    seen = echoed(result)
    if seen is None:
        raise SetupRefused(f"the call to {result.get('name')} did not reach the echo: {brief(result)}")
    token = bearer(target, str(result.get("name")), seen)
    inspected = Inspected.parse(token) if token else None
    if inspected is None:
        raise SetupRefused(f"the call to {result.get('name')} carried no readable Bearer assertion: "
                           f"{token!r}")
    return seen, inspected


def assertions_of(target: PlatformTarget, slug: str, **kwargs: Any) -> list[Inspected]:
    """Publish echo tools, call them all in one step, and return the assertions they received."""
    names = echo_project(target, slug, **kwargs)
    conversation = target.conversation(target.project(slug))
    results = conversation.step(conversation.turn(), *[(name, {}) for name in names])
    return [received(target, result)[1] for result in results]


@SUITE.case(
    "assertion/signed-verifiable",
    title="Every call carries an assertion that verifies against the JWKS",
    requirement="A call's Authorization: Bearer token is a JWT (typ JWT, an asymmetric alg) whose kid is "
                "published at {iss}/.well-known/jwks.json and whose signature verifies with that key.",
    spec=(running("Every tool call the platform makes to your endpoint comes with a short-lived signed "
                  "assertion, a JSON Web Token sent as a standard Authorization: Bearer token"),
          running("Your backend fetches that organization’s public keys from {iss}/.well-known/jwks.json and "
                  "verifies the signature against them.")),
)
def signed_verifiable(target: PlatformTarget) -> Verdict:
    [assertion] = assertions_of(target, "assertion_signed")
    check = Check()
    verify_signature(check, assertion, target.issuer)
    return check.verdict()


@SUITE.case(
    "assertion/jwks-published",
    title="The JWKS is public, cacheable, and signs session tokens too",
    requirement="GET {iss}/.well-known/jwks.json answers 200 without credentials, with a max-age, every key "
                "with kid, alg and use sig and nothing private; the session token's kid is among them and "
                "verifies.",
    spec=(running("This is the same key set that signs your session tokens."),
          contract("Its keys: `GET {issuer}/.well-known/jwks.json` (public, `Cache-Control: max-age=300`), "
                   "every key with `kid`, `alg`, `use: \"sig\"`.")),
)
def jwks_published(target: PlatformTarget) -> Verdict:
    check = Check()
    response = fetch_jwks(target.issuer)
    if not check.equal(f"GET {target.issuer}{JWKS_PATH} without credentials", 200, response.status_code):
        return check.verdict()
    check.expect("max-age=" in response.headers.get("Cache-Control", ""), "Cache-Control", "a max-age",
                 response.headers.get("Cache-Control"))
    keys = response.json().get("keys")
    if not check.expect(isinstance(keys, list) and keys, "keys", "a non-empty list", keys):
        return check.verdict()
    for key in (k if isinstance(k, dict) else {} for k in keys):
        kid = key.get("kid")
        check.expect(isinstance(kid, str) and kid and key.get("alg") and key.get("use") == "sig",
                     f"key {kid}", "kid, alg and use: sig",
                     {m: key.get(m) for m in ("kid", "alg", "use")})
        check.equal(f"key {kid}: private members", [], [m for m in PRIVATE_MEMBERS if m in key])
    session = Inspected.parse(target.session_token())
    if check.expect(session is not None, "the session token", "a JWT", "unreadable"):
        verify_signature(check, session, target.issuer, what="session token", typ=None)
    return check.verdict()


@SUITE.case(
    "assertion/issuer",
    title="iss is the organization's issuer",
    requirement="The assertion's iss is the organization's issuer URL, the one its session tokens carry.",
    spec=running("iss, the issuer: your organization’s URL on the platform."),
)
def issuer(target: PlatformTarget) -> Verdict:
    [assertion] = assertions_of(target, "assertion_issuer")
    check = Check()
    check.equal("iss", target.issuer, assertion.claims.get("iss"))
    return check.verdict()


@SUITE.case(
    "assertion/audience",
    title="aud is exactly the one tool being called",
    requirement="Each call's assertion has aud equal to that call's tool name, as a single string.",
    spec=running("aud, the audience: the name of the one tool being called."),
)
def audience(target: PlatformTarget) -> Verdict:
    names = echo_project(target, "assertion_audience", count=2)
    conversation = target.conversation(target.project("assertion_audience"))
    results = conversation.step(conversation.turn(), *[(name, {}) for name in names])
    check = Check()
    for name, result in zip(names, results):
        check.equal(f"aud of the call to {name}", name, received(target, result)[1].claims.get("aud"))
    return check.verdict()


@SUITE.case(
    "assertion/subject",
    title="sub is the session's subject, on shared and per-user tools",
    requirement="The assertion's sub is the subject the session token was minted for, on a shared tool and "
                "on a per-user tool.",
    spec=(running("sub, the subject: the same opaque user identifier your backend asserted when it minted "
                  "the session token"),
          running("separate from the JWT’s sub claim above, which every call already carries")),
)
def subject(target: PlatformTarget) -> Verdict:
    check = Check()
    for slug, per_user in (("assertion_sub_shared", False), ("assertion_sub_user", True)):
        [assertion] = assertions_of(target, slug, per_user=per_user)
        check.equal(f"sub on a {'per-user' if per_user else 'shared'} tool", target.subject,
                    assertion.claims.get("sub"))
    return check.verdict()


@SUITE.case(
    "assertion/anonymous",
    title="anon says whether the session is anonymous",
    requirement="Calls in an anonymous session carry anon true; calls in a signed-in session carry anon false.",
    spec=running("anon, whether this is an anonymous session, so you can apply anonymous policies, if any."),
)
def anonymous(target: PlatformTarget) -> Verdict:
    [name] = echo_project(target, "assertion_anon")
    check = Check()
    for anon in (True, False):
        token = target.session_token(anonymous=anon)
        result = target.conversation(target.project("assertion_anon"), token).call(name)
        check.equal(f"anon in a{'n anonymous' if anon else ' signed-in'} session", anon,
                    received(target, result)[1].claims.get("anon"))
    return check.verdict()


@SUITE.case(
    "assertion/turn-grouping",
    title="Every call of a turn carries that turn's random id",
    requirement="All calls of one turn, across its steps, carry turn equal to the turn's id; another turn's "
                "calls carry another id; the id is not a counter.",
    spec=(running("turn, a random identifier for the model turn this call belongs to, generated at the start "
                  "of each turn."),
          running("Every tool call the model makes within that turn carries the same value"),
          running("It is not a counter and does not represent order.")),
)
def turn_grouping(target: PlatformTarget) -> Verdict:
    names = echo_project(target, "assertion_turn", count=2)
    conversation = target.conversation(target.project("assertion_turn"))
    first, second = conversation.turn(), conversation.turn()
    seen = {first: [], second: []}
    for result in conversation.step(first, *[(name, {}) for name in names]):
        seen[first].append(received(target, result)[1].claims.get("turn"))
    seen[first].append(received(target, conversation.step(first, (names[0], {}))[0])[1].claims.get("turn"))
    seen[second].append(received(target, conversation.step(second, (names[1], {}))[0])[1].claims.get("turn"))
    check = Check()
    check.expect(first != second, "the two turns' ids", "different", f"{first!r} and {second!r}")
    for turn, claims in seen.items():
        check.equal(f"turn claims of the calls in turn {turn}", [turn] * len(claims), claims)
    counters = [t for t in (first, second) if str(t).lstrip("-").isdigit()]
    check.equal("turn ids that read as counters", [], counters)
    return check.verdict()


@SUITE.case(
    "assertion/expiry",
    title=f"exp is iat plus {ASSERTION_LIFETIME_SECONDS} s, minted at the call",
    requirement=f"The assertion's exp is exactly iat + {ASSERTION_LIFETIME_SECONDS}, and iat is the time of "
                f"the call (within {CLOCK_TOLERANCE_SECONDS} s of the kit's clock).",
    spec=(running("exp, the expiry: thirty seconds after the call is minted."),
          contract("`exp` = `iat` + 30")),
)
def expiry(target: PlatformTarget) -> Verdict:
    [assertion] = assertions_of(target, "assertion_expiry")
    claims, now = assertion.claims, time.time()
    check = Check()
    iat, exp = claims.get("iat"), claims.get("exp")
    if check.expect(isinstance(iat, int) and isinstance(exp, int), "iat and exp", "integers", (iat, exp)):
        check.equal("exp - iat", ASSERTION_LIFETIME_SECONDS, exp - iat)
        check.expect(abs(iat - now) <= CLOCK_TOLERANCE_SECONDS, "iat", f"within {CLOCK_TOLERANCE_SECONDS} s "
                     f"of {int(now)}", iat)
    return check.verdict()


@SUITE.case(
    "assertion/claims-complete",
    title="Every claim is present, typed, and jti is unique per call",
    requirement="Each assertion carries iss, aud, sub, anon, turn, iat, exp and jti with their types, and no "
                "two calls share a jti.",
    spec=(running("The assertion carries:"),
          contract("claims `iss`, `aud` (the tool's name), `sub`, `anon`, `turn`, `iat`, `exp` = `iat` + 30, "
                   "`jti`")),
)
def claims_complete(target: PlatformTarget) -> Verdict:
    names = echo_project(target, "assertion_claims", count=2)
    conversation = target.conversation(target.project("assertion_claims"))
    results = conversation.step(conversation.turn(), *[(name, {}) for name in names + names[:1]])
    check = Check()
    jtis = []
    for index, result in enumerate(results):
        claims = received(target, result)[1].claims
        check_claim_types(check, claims, what=f"call {index}")
        jtis.append(claims.get("jti"))
    check.equal("distinct jti values", len(jtis), len(set(jtis)))
    return check.verdict()


@SUITE.case(
    "assertion/only-assertion-forwarded",
    title="No credential but the assertion reaches the endpoint",
    requirement="The endpoint receives the call assertion as its Bearer, no cookie, and neither the session "
                "token nor any API key anywhere in the request.",
    spec=(threats("the platform never forwards the session token, an API key or a cookie to an endpoint"),
          running("This assertion also lets your endpoint tell portal-originated traffic apart from other "
                  "sources.")),
)
def only_assertion_forwarded(target: PlatformTarget) -> Verdict:
    [name] = echo_project(target, "assertion_forwarded", per_user=True)
    token = target.session_token()
    result = target.conversation(target.project("assertion_forwarded"), token).call(name)
    seen, assertion = received(target, result)
    check = Check()
    headers = {k.lower() for k in seen.get("headers", {})}
    check.expect("cookie" not in headers, "a Cookie header", "none", sorted(headers))
    everything = repr(seen)
    secrets = {"the session token": token, "the admin key": target.admin_key, "the agent key": target.agent_key}
    for label, secret in secrets.items():
        check.expect(not secret or secret not in everything, f"{label} in the request", "absent", "present")
    check.expect(assertion.header.get("typ") == "JWT" and assertion.claims.get("aud") == name,
                 "the Bearer", "the call assertion (typ JWT, aud the tool)", assertion.header)
    return check.verdict()
