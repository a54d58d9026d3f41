"""Private keys at rest: sealed with AES-256-GCM under a key derived from TOOLGATE_SECRET_KEY.

AES-GCM rather than Fernet because it authenticates associated data: the kid and alg are bound
into every sealed text, so a sealed key copied onto another row (another kid, another
organization's row, another algorithm) fails to open instead of quietly signing as that row.
"""
from __future__ import annotations

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from service.keys.algorithms import check_private_key, jwk_thumbprint
from service.keys.signing_key import SigningKey

#: Marks the format of a sealed text, so a later format can be told apart and migrated.
SEALED_PREFIX = "v1."

# HKDF's `info`: names this use of the secret, so the same TOOLGATE_SECRET_KEY used for anything
# else in the platform yields an unrelated key.
_HKDF_INFO = b"toolgate signing-key sealing v1"
#: AES-GCM's nonce: 96 random bits, the size the algorithm is made for (NIST SP 800-38D).
NONCE_BYTES = 12


class SealError(Exception):
    """A sealed private key could not be opened. The message names the kid and never the text."""


def _sealing_key(secret: str) -> AESGCM:
    if not isinstance(secret, str) or not secret:
        raise ValueError("TOOLGATE_SECRET_KEY is empty: private keys cannot be sealed or opened.")
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(
        secret.encode("utf-8")
    )
    return AESGCM(derived)


def _associated_data(kid: str, alg: str) -> bytes:
    return f"{kid}\n{alg}".encode("utf-8")


def seal_private_key(key: SigningKey, secret: str) -> str:
    """The private key of `key` as text safe to store: `v1.` then base64url(nonce || ciphertext)."""
    der = key.private_key.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    nonce = os.urandom(NONCE_BYTES)
    sealed = _sealing_key(secret).encrypt(nonce, der, _associated_data(key.kid, key.alg))
    return SEALED_PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")


def unseal_private_key(
    kid: str, alg: str, sealed: str, secret: str, created_at: int, retired_at: int | None = None
) -> SigningKey:
    """Open a stored key row into a `SigningKey`, parsing the private key once.

    Raises SealError when the text is not a sealed key, the secret is not the one it was sealed
    with, or the row's kid or alg is not the one it was sealed under.
    """
    aead = _sealing_key(secret)
    if not isinstance(sealed, str) or not sealed.startswith(SEALED_PREFIX):
        raise SealError(f"The stored private key of {kid} is not in a sealed format this version reads.")
    try:
        blob = base64.urlsafe_b64decode(sealed[len(SEALED_PREFIX):].encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise SealError(f"The stored private key of {kid} is not valid sealed text.") from None
    if len(blob) <= NONCE_BYTES:
        raise SealError(f"The stored private key of {kid} is truncated.")
    try:
        der = aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], _associated_data(kid, alg))
    except InvalidTag:
        raise SealError(
            f"The private key of {kid} cannot be opened: TOOLGATE_SECRET_KEY is not the secret it "
            "was sealed with, or the stored row (its text, kid or alg) was altered."
        ) from None
    loaded = serialization.load_der_private_key(der, password=None)
    try:
        private_key = check_private_key(alg, loaded)
    except ValueError:
        raise SealError(f"The private key of {kid} is not a key for {alg}.") from None
    if jwk_thumbprint(private_key.public_key()) != kid:
        raise SealError(f"The private key stored as {kid} has a different thumbprint.")
    return SigningKey(kid=kid, alg=alg, private_key=private_key, created_at=int(created_at),
                      retired_at=retired_at)
