"""Identity: the organization's own OpenID providers (admins): add one, test a token against them (the subject and
entitlements it maps to, or why it is refused), remove one. The same functions as `/v1/identity-providers`."""
from __future__ import annotations

from typing import Any

from flask import current_app, request

from service import identity
from service.catalogue import Violation, violation
from service.dashboard.web import blp, done, page, principal, requires
from service.errors import ServiceError
from service.http import DISPATCHER_KEY, app_config
from service.roles import MANAGE_KEYS

FIELDS = ("name", "issuer", "audience", "subject_claim", "entitlements_claim", "algorithms")
DEFAULTS = {"subject_claim": "sub", "entitlements_claim": "scope", "algorithms": "RS256"}
#: Why a pasted token is refused, for the admin testing it (the API's answer never says; the log does).
WHY = {
    "malformed": "It is not a signed JWT this service can read.",
    "forbidden-header": "Its header embeds or points at a key (jwk, jku, x5u, x5c) or a critical extension.",
    "wrong-type": "Its typ is neither at+jwt nor JWT: it is not an access token.",
    "bad-algorithm": "It is signed with an algorithm the provider's settings do not list (or none at all).",
    "unknown-key": "Its kid names no key the provider publishes.",
    "bad-signature": "Its signature does not verify with the provider's key.",
    "wrong-issuer": "Its iss is not the provider's issuer, exactly.",
    "wrong-audience": "Its aud is not this provider's audience (one value, exactly).",
    "missing-claim": "It lacks a required claim: iss, aud, exp, iat, or the subject claim.",
    "expired": "It has expired.",
    "not-yet-valid": "It is not valid yet (iat or nbf is in the future).",
    "lifetime-too-long": "Its lifetime (exp − iat) is longer than a day.",
    "bad-subject": "Its subject claim is not a subject: 1 to 256 characters, no control characters, not . or ..",
    "bad-entitlements": "Its entitlements claim is neither a space-separated string nor an array of claims.",
    "untrusted-issuer": "None of this organization's providers has its issuer.",
}


def _org():
    return principal().organization


def _guard():
    return current_app.extensions[DISPATCHER_KEY].guard


def _screen(status: int = 200, *, form: dict[str, str] | None = None, violations=(), tested: dict | None = None,
            token: str = ""):
    rows = [row.view() for row in identity.list_providers(_org())]
    return page("identity.html", status, violations=violations, providers=rows, form=form or dict(DEFAULTS),
                tested=tested, token=token)


@blp.get("/identity")
@requires(MANAGE_KEYS)
def identity_providers():
    return _screen()


def _body(form: dict[str, str]) -> dict[str, Any]:
    algorithms = [a for a in form["algorithms"].replace(",", " ").split() if a]
    return {"issuer": form["issuer"], "audience": form["audience"], "subject_claim": form["subject_claim"],
            "entitlements_claim": form["entitlements_claim"], "algorithms": algorithms}


@blp.post("/identity")
@requires(MANAGE_KEYS)
def add_identity_provider():
    form = {name: request.form.get(name, "").strip() for name in FIELDS}
    who = principal()
    try:
        row, created = identity.trust_provider(who.organization, form["name"], _body(form), who.actor, _guard(),
                                               app_config(current_app).issuer(""))
    except ServiceError as error:
        return _screen(error.status, form=form,
                       violations=[Violation(v.field, v.rule, error.message if v.rule.startswith(
                           ("issuer-", "discovery-", "key-set-")) else v.message) for v in error.violations]
                       or [Violation("name", error.code, error.message)])
    return done(f"{'Added' if created else 'Changed'} identity provider {row.name}: its tokens now act as session "
                "tokens.", "dashboard.identity_providers")


@blp.post("/identity/test")
@requires(MANAGE_KEYS)
def test_identity_token():
    token = request.form.get("token", "").strip()
    if not token:
        return _screen(422, violations=[violation("token", "token-required")])
    try:
        verified = identity.verify_for_organization(token, _org(), _guard())
    except identity.ProviderTokenError as error:
        return _screen(tested={"refused": WHY.get(error.reason, error.reason), "reason": error.reason}, token=token)
    except ServiceError as error:
        return _screen(tested={"refused": error.message, "reason": error.code}, token=token)
    claims = verified.claims
    return _screen(tested={"provider": verified.provider.name, "subject": claims.subject,
                           "entitlements": list(claims.entitlements), "expires_at": claims.expires_at}, token=token)


@blp.post("/identity/<name>/remove")
@requires(MANAGE_KEYS)
def remove_identity_provider(name: str):
    identity.remove_provider(_org(), name, principal().actor)
    return done(f"Removed identity provider {name}: its tokens are refused from now on.",
                "dashboard.identity_providers")
