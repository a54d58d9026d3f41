"""The operations tables (created by migration 0003): the audit trail and its per-organization chain head."""
from __future__ import annotations

from peewee import AutoField, CharField, DoubleField, ForeignKeyField, IntegerField

from service.models import BaseModel, Organization


class AuditRecord(BaseModel):
    """One registry change: who, when, what, and the hashes that chain it to the record before."""

    id = AutoField()
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    organization_id: int
    #: 1, 2, 3, … within the organization, with no gaps: a missing number is a removed record.
    seq = IntegerField()
    created_at = DoubleField()
    #: "person:admin:<key id>", "agent:agent:<key id>", or "person:operator:cli" for the command line.
    actor = CharField()
    action = CharField()
    object_type = CharField()
    object_name = CharField()
    object_version = IntegerField(null=True)
    before_hash = CharField(null=True)
    after_hash = CharField(null=True)
    prev_hash = CharField()
    hash = CharField()

    class Meta:
        table_name = "audit_record"
        indexes = ((("organization", "seq"), True),)


class AuditHead(BaseModel):
    """The last record of an organization's chain. Appends lock this row, so two writers never fork the chain."""

    organization = ForeignKeyField(Organization, primary_key=True, on_delete="CASCADE")
    seq = IntegerField()
    hash = CharField()

    class Meta:
        table_name = "audit_head"
