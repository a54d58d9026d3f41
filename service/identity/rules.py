"""An identity provider's settings and the rules they must pass before anything is fetched.

Plain data: the settings an admin writes (`PUT /v1/identity-providers/{name}`), checked all together, every broken
rule reported at once with the catalogue's sentence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from service.catalogue import Violation, violation
from service.text import text_problem

#: What a provider's tokens may be signed with, once configured: asymmetric only (never `none` or an HMAC, whose
#: key a verifier would have to share), as pyjwt names them.
PROVIDER_ALGORITHMS: tuple[str, ...] = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")

#: What the contract's example body leaves out is taken as: `sub` names the subject, `scope` the entitlements, and
#: RS256, which Auth0, Okta, Keycloak and Entra ID all sign access tokens with unless told otherwise.
DEFAULT_SUBJECT_CLAIM = "sub"
DEFAULT_ENTITLEMENTS_CLAIM = "scope"
DEFAULT_ALGORITHMS = ("RS256",)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_MAX_AUDIENCE_CHARS = 512
_MAX_CLAIM_CHARS = 200
_MAX_ISSUER_CHARS = 512


@dataclass(frozen=True)
class ProviderSettings:
    """What an organization trusts: tokens of `issuer` for `audience`, signed with one of `algorithms`."""

    name: str
    issuer: str
    audience: str
    subject_claim: str = DEFAULT_SUBJECT_CLAIM
    entitlements_claim: str = DEFAULT_ENTITLEMENTS_CLAIM
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "issuer": self.issuer, "audience": self.audience,
                "subject_claim": self.subject_claim, "entitlements_claim": self.entitlements_claim,
                "algorithms": list(self.algorithms)}


def name_fits(name: object) -> bool:
    """Whether `name` can name a provider (it rides in a URL path)."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def issuer_fits(issuer: object) -> bool:
    """An absolute http(s) address with a host, and no query, fragment, user info or white space."""
    if not isinstance(issuer, str) or not issuer or len(issuer) > _MAX_ISSUER_CHARS or text_problem(issuer):
        return False
    try:
        parts = urlsplit(issuer)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and bool(parts.hostname) and parts.username is None
            and not parts.query and not parts.fragment and "?" not in issuer and "#" not in issuer
            and not any(c.isspace() for c in issuer))


def _claim_fits(value: object) -> bool:
    return (isinstance(value, str) and 0 < len(value) <= _MAX_CLAIM_CHARS and text_problem(value) is None
            and not any(c.isspace() for c in value))


def _algorithms_fit(value: object) -> bool:
    return (isinstance(value, list) and 0 < len(value) <= len(PROVIDER_ALGORITHMS)
            and all(isinstance(a, str) and a in PROVIDER_ALGORITHMS for a in value) and len(set(value)) == len(value))


def check_settings(name: object, body: object, platform_issuer_prefix: str) -> tuple[ProviderSettings | None,
                                                                                      list[Violation]]:
    """The settings `body` asks for under `name`, or every rule they break. `platform_issuer_prefix` is where the
    platform's own organizations' issuers begin (`{public_url}/orgs/`): those cannot be trusted as a provider."""
    found: list[Violation] = []
    body = body if isinstance(body, dict) else {}
    if not name_fits(name):
        found.append(violation("name", "provider-name-format"))
    issuer = body.get("issuer")
    if issuer is None:
        found.append(violation("issuer", "field-required"))
    elif not issuer_fits(issuer):
        found.append(violation("issuer", "issuer-format"))
    elif issuer.rstrip("/").startswith(platform_issuer_prefix.rstrip("/")):
        found.append(violation("issuer", "issuer-platform"))
    audience = body.get("audience")
    if audience is None:
        found.append(violation("audience", "field-required"))
    elif not (isinstance(audience, str) and 0 < len(audience) <= _MAX_AUDIENCE_CHARS and not text_problem(audience)):
        found.append(violation("audience", "audience-format"))
    subject_claim = body.get("subject_claim", DEFAULT_SUBJECT_CLAIM)
    if not _claim_fits(subject_claim):
        found.append(violation("subject_claim", "claim-name-format"))
    entitlements_claim = body.get("entitlements_claim", DEFAULT_ENTITLEMENTS_CLAIM)
    if not _claim_fits(entitlements_claim):
        found.append(violation("entitlements_claim", "claim-name-format"))
    algorithms = body.get("algorithms", list(DEFAULT_ALGORITHMS))
    if not _algorithms_fit(algorithms):
        found.append(violation("algorithms", "algorithms-format"))
    if found or not isinstance(issuer, str) or not isinstance(audience, str):
        return None, found
    return ProviderSettings(name=str(name), issuer=issuer, audience=audience, subject_claim=subject_claim,
                            entitlements_claim=entitlements_claim, algorithms=tuple(algorithms)), []
