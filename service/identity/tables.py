"""The identity-provider table (created by migration 0008)."""
from __future__ import annotations

from peewee import AutoField, CharField, DoubleField, ForeignKeyField, IntegerField, TextField

from service.identity.rules import ProviderSettings
from service.models import BaseModel, JSONField, Organization


class IdentityProviderRow(BaseModel):
    """One organization's trust in tokens of `issuer` for `audience`; `jwks_uri` is what its discovery named."""

    id = AutoField()
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    organization_id: int
    name = CharField()
    issuer = CharField()
    audience = CharField()
    subject_claim = CharField()
    entitlements_claim = CharField()
    algorithms = JSONField()
    jwks_uri = TextField()
    revision = IntegerField()
    created_at = DoubleField()
    updated_at = DoubleField()

    class Meta:
        table_name = "identity_provider"

    def settings(self) -> ProviderSettings:
        return ProviderSettings(name=self.name, issuer=self.issuer, audience=self.audience,
                                subject_claim=self.subject_claim, entitlements_claim=self.entitlements_claim,
                                algorithms=tuple(self.algorithms))

    def view(self) -> dict:
        """The provider as the API and the dashboard show it."""
        return {**self.settings().to_dict(), "jwks_uri": self.jwks_uri, "revision": self.revision,
                "created_at": self.created_at, "updated_at": self.updated_at}
