"""An organization's own identity providers: their settings and rules, discovery and key sets through the outbound
guard, and their access tokens verified as THREATS.md holds them. Plain Python, no Flask; the rows at the edge of
`store`."""
from service.identity.rules import PROVIDER_ALGORITHMS, ProviderSettings, check_settings
from service.identity.store import get_provider, list_providers, remove_provider, still_trusted
from service.identity.tables import IdentityProviderRow
from service.identity.tokens import REASONS, ProviderClaims, ProviderTokenError, verify_access_token
from service.identity.trust import (
    ProviderSession,
    key_sets,
    trust_provider,
    verify_for_organization,
    verify_provider_token,
)

__all__ = [
    "PROVIDER_ALGORITHMS", "REASONS", "IdentityProviderRow", "ProviderClaims", "ProviderSession", "ProviderSettings",
    "ProviderTokenError", "check_settings", "get_provider", "key_sets", "list_providers", "remove_provider",
    "still_trusted", "trust_provider", "verify_access_token", "verify_for_organization", "verify_provider_token",
]
