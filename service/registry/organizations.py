"""Organizations and their API keys. A key is shown once; only a hash of its secret is stored."""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from service.catalogue import violation
from service.database import write_transaction
from service.errors import ServiceError, conflict, unauthorized
from service.models import ApiKey, Organization, now
from service.records import audit
from service.text import is_text

ROLES = ("admin", "agent", "backend")
KEY_PREFIX = "tgk"
SLUG_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")  # fullmatch: "$" would let a final "\n" in


@dataclass(frozen=True)
class Principal:
    """Who is calling with an API key: their organization, role and a label for records."""

    organization: Organization
    role: str
    key_id: str

    @property
    def actor(self) -> str:
        """How records name this caller: the key's public id and role, never its secret."""
        kind = "agent" if self.role == "agent" else "person"
        return f"{kind}:{self.role}:{self.key_id}"


def create_organization(slug: str, algorithm: str = "ES256") -> Organization:
    """A new organization; its signing key is made by `service.keys.store` (see `service.provisioning`)."""
    if not SLUG_PATTERN.fullmatch(slug or ""):
        raise ServiceError(422, "invalid", "The slug is invalid.", [violation("slug", "slug-format")])
    if Organization.select().where(Organization.slug == slug).exists():
        raise conflict(violation("slug", "slug-taken"))
    return Organization.create(slug=slug, algorithm=algorithm, created_at=now())


def get_organization(slug: str) -> Organization | None:
    return Organization.get_or_none(Organization.slug == slug) if is_text(slug) else None


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_api_key(organization: Organization, role: str, label: str = "", actor: str = audit.CLI_ACTOR) -> str:
    """Make a key and return it whole, the only time it is ever seen (the audit trail gets its public id only)."""
    if role not in ROLES:
        raise ServiceError(422, "invalid", "The role is invalid.", [violation("role", "role-unsupported")])
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    with write_transaction():
        ApiKey.create(organization=organization, key_id=key_id, secret_hash=_hash(secret), role=role,
                      label=label, created_at=now())
        audit.record(organization, actor, audit.API_KEY_CREATE, audit.API_KEY, key_id,
                     after={"key_id": key_id, "role": role, "label": label})
    return f"{KEY_PREFIX}_{key_id}_{secret}"


def looks_like_api_key(token: str) -> bool:
    return token.startswith(f"{KEY_PREFIX}_")


def authenticate_api_key(token: str) -> Principal:
    """The principal of a presented key, or 401. The secret is compared in constant time."""
    parts = token.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not is_text(parts[1]):  # PostgreSQL cannot be asked about a NUL
        raise unauthorized()
    row = (ApiKey.select(ApiKey, Organization).join(Organization)
           .where(ApiKey.key_id == parts[1], ApiKey.revoked_at.is_null()).first())
    # Hash even when no row matched, so timing does not tell a known key id from an unknown one.
    presented = _hash(parts[2])
    expected = row.secret_hash if row else _hash("")
    if not hmac.compare_digest(presented, expected) or row is None:
        raise unauthorized()
    return Principal(organization=row.organization, role=row.role, key_id=row.key_id)
