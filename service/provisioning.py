"""Creating an organization whole: the row, its key set and a first admin key."""
from __future__ import annotations

from service.config import Config
from service.database import write_transaction
from service.keys.store import create_key_set
from service.registry import create_api_key, create_organization


def create_organization_with_keys(config: Config, slug: str, algorithm: str = "ES256") -> str:
    """Create the organization, its signing keys and an admin API key; return the key (shown once)."""
    with write_transaction():
        organization = create_organization(slug, algorithm)
        create_key_set(organization, config.secret_key)
    return create_api_key(organization, "admin", "created with the organization")
