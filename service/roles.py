"""What each role may do (CONTRACT "Credentials"), and the one check every edge makes: REST, MCP and dashboard.

Plain data and one function, no Flask: an edge finds out who is calling, then asks `require(principal, power)`.
"""
from __future__ import annotations

from typing import Protocol

from service.errors import forbidden

READ, WRITE_DRAFTS, PUBLISH, MANAGE_KEYS, MINT_SESSIONS = "read", "write-drafts", "publish", "manage-keys", "mint"
#: The call log names the organization's users (subjects), so only people with admin keys read it.
READ_CALLS = "read-calls"
POWERS: dict[str, frozenset[str]] = {
    "admin": frozenset({READ, READ_CALLS, WRITE_DRAFTS, PUBLISH, MANAGE_KEYS, MINT_SESSIONS}),
    # An agent only ever writes drafts: publishing freezes what projects rely on, a person's deliberate step.
    "agent": frozenset({READ, WRITE_DRAFTS}),
    "backend": frozenset({MINT_SESSIONS}),
}


class HasRole(Protocol):
    # Read-only: a frozen Principal has it too.
    @property
    def role(self) -> str: ...


def may(role: str, power: str) -> bool:
    """Whether a key of `role` has `power`."""
    return power in POWERS.get(role, frozenset())


def require(principal: HasRole, power: str) -> None:
    """Refuse (403 `forbidden`, naming the role) unless `principal`'s role has `power`."""
    if not may(principal.role, power):
        raise forbidden(principal.role)
