"""Adding, changing, listing and removing an organization's identity providers, each change an audit record.

The row is the truth: a provider's token is verified against the row its issuer and audience find, read on every
request, so a removal refuses its tokens at once on every instance, whatever any instance has cached.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

from peewee import IntegrityError, fn

from service import limits
from service.catalogue import violation
from service.database import write_transaction
from service.errors import ServiceError, conflict, not_found
from service.identity.rules import ProviderSettings, name_fits
from service.identity.tables import IdentityProviderRow
from service.models import Organization, Project
from service.records import audit


@contextmanager
def _trust_unique() -> Iterator[None]:
    try:
        yield
    except IntegrityError:
        # (organization, name) cannot clash: the row of that name was read inside this transaction. So it is the
        # (issuer, audience) pair, trusted already by this organization under another name or by another one.
        raise conflict(violation("audience", "provider-taken")) from None


def _state(row: IdentityProviderRow) -> dict:
    return {**row.settings().to_dict(), "jwks_uri": row.jwks_uri}


def put_provider(organization: Organization, settings: ProviderSettings, jwks_uri: str,
                 actor: str) -> tuple[IdentityProviderRow, bool]:
    """Trust `settings` under its name (replacing what that name held); the row and whether it is new."""
    now = time.time()
    with _trust_unique(), write_transaction():
        row = IdentityProviderRow.get_or_none(IdentityProviderRow.organization == organization,
                                              IdentityProviderRow.name == settings.name)
        fields = {"issuer": settings.issuer, "audience": settings.audience, "subject_claim": settings.subject_claim,
                  "entitlements_claim": settings.entitlements_claim, "algorithms": list(settings.algorithms),
                  "jwks_uri": jwks_uri, "updated_at": now}
        if row is None:
            count = (IdentityProviderRow.select(fn.COUNT(IdentityProviderRow.id))
                     .where(IdentityProviderRow.organization == organization).scalar())
            if count >= limits.MAX_IDENTITY_PROVIDERS:
                raise ServiceError(422, "too-many-providers", violation("name", "too-many-providers").message,
                                   [violation("name", "too-many-providers")])
            row = IdentityProviderRow.create(organization=organization, name=settings.name, revision=1,
                                             created_at=now, **fields)
            audit.record(organization, actor, audit.PROVIDER_ADD, audit.IDENTITY_PROVIDER, settings.name,
                         version=row.revision, after=_state(row))
            return row, True
        before = _state(row)
        for key, value in fields.items():
            setattr(row, key, value)
        row.revision += 1
        row.save()
        audit.record(organization, actor, audit.PROVIDER_CHANGE, audit.IDENTITY_PROVIDER, settings.name,
                     version=row.revision, before=before, after=_state(row))
        return row, False


def list_providers(organization: Organization) -> list[IdentityProviderRow]:
    """The organization's providers, by name."""
    return list(IdentityProviderRow.select().where(IdentityProviderRow.organization == organization)
                .order_by(IdentityProviderRow.name))


def get_provider(organization: Organization, name: str) -> IdentityProviderRow:
    """The organization's provider of that name, or 404."""
    row = IdentityProviderRow.get_or_none(IdentityProviderRow.organization == organization,
                                          IdentityProviderRow.name == name) if name_fits(name) else None
    if row is None:
        raise not_found("identity provider")
    return row


def remove_provider(organization: Organization, name: str, actor: str) -> IdentityProviderRow:
    """Stop trusting the provider of that name (404 when there is none); its tokens are refused from now on."""
    with write_transaction():
        row = get_provider(organization, name)
        IdentityProviderRow.delete().where(IdentityProviderRow.id == row.id).execute()
        audit.record(organization, actor, audit.PROVIDER_REMOVE, audit.IDENTITY_PROVIDER, name,
                     version=row.revision, before=_state(row))
    return row


def provider_for(issuer: str, audience: str) -> IdentityProviderRow | None:
    """The one provider trusting tokens of `issuer` for `audience`, in whichever organization (the pair is unique)."""
    return IdentityProviderRow.get_or_none(IdentityProviderRow.issuer == issuer,
                                           IdentityProviderRow.audience == audience)


def issuer_trusted(issuer: str) -> bool:
    """Whether any provider row names `issuer` (only to say why a token was refused, in the log)."""
    return IdentityProviderRow.select(IdentityProviderRow.id).where(IdentityProviderRow.issuer == issuer).exists()


def still_trusted(provider_id: int, revision: int) -> bool:
    """Whether the provider row a session was verified against still stands, unchanged."""
    return IdentityProviderRow.select(IdentityProviderRow.id).where(
        IdentityProviderRow.id == provider_id, IdentityProviderRow.revision == revision).exists()



def organization_of_project(project: str, org: str | None) -> Organization | None:
    """The organization whose project `project` is: the one named by `org`, else the only one with a project of that
    name (None when none has, or several have and `org` does not say which)."""
    if not isinstance(project, str) or len(project) > 200 or (org is not None and len(org) > 200):
        return None
    query = (Organization.select().join(Project, on=(Project.organization == Organization.id))
             .where(Project.name == project))
    if org is not None:
        query = query.where(Organization.slug == org)
    found = list(query.limit(2))
    return found[0] if len(found) == 1 else None
