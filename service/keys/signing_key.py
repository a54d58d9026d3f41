"""One organization's signing key: parsed once, held as a cryptography object, never shown."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from service.keys.algorithms import (
    PrivateKey,
    PublicKey,
    check_algorithm,
    check_private_key,
    generate_private_key,
    jwk_thumbprint,
    public_key_members,
)


@dataclass(frozen=True)
class SigningKey:
    """A signing key as the platform uses it.

    `private_key` is the parsed cryptography object, so signing never loads a PEM. It takes no
    part in repr, str or equality; a key is identified by its `kid`. `created_at` and
    `retired_at` are epoch seconds; `retired_at` is None while the key still signs.
    """

    kid: str
    alg: str
    private_key: PrivateKey = field(repr=False, compare=False)
    created_at: int
    retired_at: int | None = None

    def __post_init__(self) -> None:
        check_algorithm(self.alg)
        check_private_key(self.alg, self.private_key)
        if not isinstance(self.kid, str) or not self.kid:
            raise ValueError("A signing key needs a non-empty kid.")

    def __repr__(self) -> str:
        # Written out rather than left to the dataclass so that no later field can leak key material.
        return (
            f"SigningKey(kid={self.kid!r}, alg={self.alg!r}, "
            f"created_at={self.created_at!r}, retired_at={self.retired_at!r})"
        )

    __str__ = __repr__

    @cached_property
    def public_key(self) -> PublicKey:
        """The public half, derived once per key object and reused by every verification."""
        return self.private_key.public_key()


def signing_key_from_private(
    private_key: PrivateKey, alg: str, created_at: int, retired_at: int | None = None
) -> SigningKey:
    """Wrap an already parsed private key, naming it by its RFC 7638 thumbprint.

    The kid is the thumbprint so that it is fixed by the key itself: the same key always has the
    same kid (known-answer vectors, re-imports), two keys never share one, anyone holding the
    public key can recompute it, and a stored row whose kid does not match its key is detectable.
    """
    check_private_key(alg, private_key)
    kid = jwk_thumbprint(private_key.public_key())
    return SigningKey(kid=kid, alg=alg, private_key=private_key, created_at=int(created_at),
                      retired_at=retired_at)


def generate_signing_key(alg: str, now: float) -> SigningKey:
    """A new key for `alg`, created at `now` (epoch seconds) and not retired."""
    return signing_key_from_private(generate_private_key(alg), alg, int(now))


def public_jwk(key: SigningKey) -> dict[str, str]:
    """The key as a JWKS entry: kid, alg, use "sig", kty and the public key material only."""
    return {"kid": key.kid, "alg": key.alg, "use": "sig", **public_key_members(key.public_key)}
