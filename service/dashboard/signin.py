"""Who is signed in: an organization API key, sealed inside a Secure, HTTP-only session cookie; CSRF tokens.

Flask's session cookie is signed, not encrypted, so the key is sealed with AES-GCM before it goes in: a copied
cookie expires with the session and never discloses the key itself. Both the signing key and the sealing key are
derived from the service's secret with HKDF under their own labels; the raw secret is never used directly.
"""
from __future__ import annotations

import base64
import binascii
import hmac
import os
import secrets
from datetime import timedelta
from urllib.parse import unquote

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import Flask, current_app, g, session

from service.errors import ServiceError
from service.keys.sealing import NONCE_BYTES
from service.limits import MAX_URL_CHARS
from service.registry import Principal, authenticate_api_key, looks_like_api_key

COOKIE_NAME = "toolgate_dashboard"
#: A signed-in session lasts a working day; the cookie's signature carries its age.
SESSION_LIFETIME = timedelta(hours=8)
_SIGNING_INFO = b"toolgate dashboard session cookie v1"
_SEALING_INFO = b"toolgate dashboard api key sealing v1"
_SEALED_KEY_AD = b"dashboard api key"
_EXTENSION = "toolgate_dashboard_seal"


def derive(secret: str, label: bytes) -> bytes:
    """A 32-byte key for one use of the service secret, unrelated to any other use's."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=label).derive(secret.encode("utf-8"))


def configure(app: Flask, secret: str) -> bool:
    """Set up signed, sealed session cookies on `app`; False when there is no secret to derive them from."""
    if not secret:
        return False
    app.secret_key = derive(secret, _SIGNING_INFO)
    app.config.update(
        SESSION_COOKIE_NAME=COOKIE_NAME,
        SESSION_COOKIE_SECURE=True,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        PERMANENT_SESSION_LIFETIME=SESSION_LIFETIME,
    )
    app.extensions[_EXTENSION] = AESGCM(derive(secret, _SEALING_INFO))
    return True


def configured() -> bool:
    """Whether this app could derive its cookie keys (it has a service secret)."""
    return _EXTENSION in current_app.extensions


def seal(api_key: str) -> str:
    nonce = os.urandom(NONCE_BYTES)
    sealed = current_app.extensions[_EXTENSION].encrypt(nonce, api_key.encode("utf-8"), _SEALED_KEY_AD)
    return base64.urlsafe_b64encode(nonce + sealed).decode("ascii")


def unseal(text: str) -> str | None:
    try:
        blob = base64.urlsafe_b64decode(text.encode("ascii"))
        opened = current_app.extensions[_EXTENSION].decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], _SEALED_KEY_AD)
    except (InvalidTag, binascii.Error, ValueError, UnicodeError):
        return None
    return opened.decode("utf-8")


def sign_in(api_key: str) -> Principal:
    """Check the key and start a fresh session for it (a new CSRF token too, so a planted one dies here)."""
    key = (api_key or "").strip()
    if not looks_like_api_key(key):
        raise ServiceError(401, "unauthorized", "That is not an API key of this service.")
    principal = authenticate_api_key(key)
    session.clear()
    session.permanent = True
    session["key"] = seal(key)
    session["csrf"] = secrets.token_urlsafe(32)
    g.principal = principal
    return principal


def sign_out() -> None:
    session.clear()
    g.principal = None


def signed_in() -> Principal | None:
    """The signed-in key's principal, checked against the database on every request (a revoked key is out)."""
    if "principal" not in g:
        principal = None
        sealed = session.get("key")
        key = unseal(sealed) if isinstance(sealed, str) else None
        if key is not None:
            try:
                principal = authenticate_api_key(key)
            except ServiceError:
                session.clear()
        g.principal = principal
    return g.principal


def safe_next(target: str | None) -> str | None:
    """`target` when it is a path on this site to go to after signing in, else None (go to the dashboard's home).

    Only printable ASCII is taken, starting with one "/" and not two and holding no backslash, even once
    percent-decoded: browsers drop tabs and line breaks from a URL and read a backslash as "/", so `/%09/evil.example`
    sent in a form led to //evil.example, and a CR or LF cannot stand in the Location header at all (a 500)."""
    if not target or len(target) > MAX_URL_CHARS or not all("\x21" <= ch <= "\x7e" for ch in target):
        return None
    decoded = unquote(target)
    if not target.startswith("/") or decoded.startswith("//") or "\\" in decoded or not decoded.isprintable():
        return None
    return target


def csrf_token() -> str:
    """This session's CSRF token, made on first use."""
    token = session.get("csrf")
    if not isinstance(token, str):
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


def csrf_ok(sent: str | None) -> bool:
    """True when the form carried this session's token (compared in constant time)."""
    expected = session.get("csrf")
    return isinstance(expected, str) and isinstance(sent, str) and hmac.compare_digest(sent, expected)
