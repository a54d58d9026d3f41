"""An organization's key set in the database: sealed rows in, parsed `SigningKey`s out.

Each organization keeps an active key, retired keys still inside their publication window, and one
standby key that is published before it ever signs (THREATS: rotation publishes the next key before it
signs). Rotation retires the active key, promotes the standby at once, and makes a new standby.
Private keys are unsealed once per process and kept by kid: a kid names one immutable key.
"""
from __future__ import annotations

import time
from dataclasses import replace

from service.database import generation, write_transaction
from service.keys.jwks import RETIRED_KEY_PUBLISHED_SECONDS, active_key
from service.keys.sealing import seal_private_key, unseal_private_key
from service.keys.signing_key import SigningKey, generate_signing_key, public_jwk
from service.models import Organization, SigningKeyRow
from service.records import audit

_unsealed: dict[str, SigningKey] = {}


class MissingSecret(RuntimeError):
    """TOOLGATE_SECRET_KEY is not set, so no private key can be sealed or opened."""


def _require(secret: str) -> str:
    if not secret:
        raise MissingSecret("TOOLGATE_SECRET_KEY is not set: private signing keys cannot be sealed or opened.")
    return secret


def _store(organization: Organization, key: SigningKey, secret: str, *, standby: bool) -> None:
    SigningKeyRow.create(organization=organization, kid=key.kid, alg=key.alg, created_at=key.created_at,
                         sealed_private_key=seal_private_key(key, _require(secret)), standby=standby)


def create_key_set(organization: Organization, secret: str, now: float | None = None) -> None:
    """The first active key and its standby, for a new organization."""
    now = time.time() if now is None else now
    with write_transaction():
        _store(organization, generate_signing_key(organization.algorithm, now), secret, standby=False)
        _store(organization, generate_signing_key(organization.algorithm, now), secret, standby=True)


def _open(row: SigningKeyRow, secret: str) -> SigningKey:
    key = _unsealed.get(row.kid)
    if key is None:
        key = unseal_private_key(row.kid, row.alg, row.sealed_private_key, _require(secret), int(row.created_at))
        _unsealed[row.kid] = key
    retired = None if row.retired_at is None else int(row.retired_at)
    return key if key.retired_at == retired else replace(key, retired_at=retired)


def _rows(organization: Organization, now: float) -> list[SigningKeyRow]:
    """The rows of keys still published at `now`, oldest first (decided without opening any key)."""
    rows = SigningKeyRow.select().where(SigningKeyRow.organization == organization).order_by(SigningKeyRow.id)
    return [row for row in rows
            if row.retired_at is None or now - row.retired_at < RETIRED_KEY_PUBLISHED_SECONDS]


#: Seconds a process keeps using the active key it last read. A rotation done by another instance reaches this one
#: within that time; until then it signs with the retired key, which stays published far longer than that.
ACTIVE_KEY_TTL_SECONDS = 5.0
_active: dict[tuple[int, int], tuple[float, SigningKey]] = {}


def signing_key(organization: Organization, secret: str) -> SigningKey:
    """The key that signs now for this organization (read at most every ACTIVE_KEY_TTL_SECONDS)."""
    now = time.time()
    cache_key = (generation(), organization.id)
    cached = _active.get(cache_key)
    if cached is not None and now - cached[0] < ACTIVE_KEY_TTL_SECONDS:
        return cached[1]
    key = active_key(_open(row, secret) for row in _rows(organization, now) if not row.standby)
    _active[cache_key] = (now, key)
    return key


def verification_keys(organization: Organization, secret: str, now: float | None = None) -> list[SigningKey]:
    """Every key that may have signed a still-valid token (the standby has signed nothing)."""
    now = time.time() if now is None else now
    return [_open(row, secret) for row in _rows(organization, now) if not row.standby]


def jwks(organization: Organization, secret: str, now: float | None = None) -> dict:
    """The organization's JWKS: the active key, retired keys still in their window, and the standby."""
    now = time.time() if now is None else now
    return {"keys": [public_jwk(_open(row, secret)) for row in reversed(_rows(organization, now))]}


def rotate(organization: Organization, secret: str, actor: str, now: float | None = None) -> SigningKey:
    """Retire the active key, promote the standby (it signs at once), publish a new standby."""
    now = time.time() if now is None else now
    with write_transaction():
        before = _key_set_state(organization)
        SigningKeyRow.update(retired_at=now).where(
            SigningKeyRow.organization == organization, SigningKeyRow.standby == False,  # noqa: E712
            SigningKeyRow.retired_at.is_null()).execute()
        SigningKeyRow.update(standby=False).where(
            SigningKeyRow.organization == organization, SigningKeyRow.standby == True).execute()  # noqa: E712
        _store(organization, generate_signing_key(organization.algorithm, now), secret, standby=True)
        after = _key_set_state(organization)
        audit.record(organization, actor, audit.KEY_ROTATE, audit.SIGNING_KEY, next(iter(after["active"]), ""),
                     before=before, after=after)
    _active.pop((generation(), organization.id), None)  # this instance signs with the new key at once
    return signing_key(organization, secret)


def _key_set_state(organization: Organization) -> dict[str, list[str]]:
    """The unretired keys for the audit trail, by kid: which signs and which waits (never a private key)."""
    rows = list(SigningKeyRow.select(SigningKeyRow.kid, SigningKeyRow.standby)
                .where(SigningKeyRow.organization == organization, SigningKeyRow.retired_at.is_null())
                .order_by(SigningKeyRow.id))
    return {"active": [r.kid for r in rows if not r.standby], "standby": [r.kid for r in rows if r.standby]}
