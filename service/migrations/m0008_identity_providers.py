"""Identity providers an organization trusts: tokens of `issuer` for `audience` act as its session tokens.

One row per trust. The pair (issuer, audience) is unique across every organization, so a provider's token finds
exactly one organization, or none; (organization, name) is unique within one. `revision` moves on every change, so a
session remembered from a token of an older configuration is verified again.
"""
from service.migrations import execute_script

UP = """
CREATE TABLE identity_provider (
    id {pk},
    organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    name VARCHAR(64) NOT NULL,
    issuer VARCHAR(512) NOT NULL, audience VARCHAR(512) NOT NULL,
    subject_claim VARCHAR(200) NOT NULL, entitlements_claim VARCHAR(200) NOT NULL,
    algorithms TEXT NOT NULL, jwks_uri TEXT NOT NULL,
    revision INTEGER NOT NULL,
    created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL);
CREATE UNIQUE INDEX identity_provider_name ON identity_provider (organization_id, name);
CREATE UNIQUE INDEX identity_provider_trust ON identity_provider (issuer, audience)
"""


def up(db):
    execute_script(db, UP)


def down(db):
    db.execute_sql("DROP TABLE IF EXISTS identity_provider")
