"""Keys: the public JWKS, rotation, and minting session tokens for the organization's backend."""
from __future__ import annotations

import time

from flask import current_app, jsonify
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields

from service.api.auth import current_principal, requires
from service.api.body import json_body
from service.api.schemas import IgnoresUnknownSchema
from service.catalogue import Violation, violation
from service.errors import ServiceError, not_found
from service.http import app_config
from service.keys import mint_session_token, subject_fits
from service.keys.store import jwks, rotate, signing_key
from service.limits import MAX_ENTITLEMENTS, SESSION_TOKEN_MAX_SECONDS
from service.registry import get_organization
from service.roles import MANAGE_KEYS, MINT_SESSIONS
from service.text import is_text

blp = Blueprint("keys", __name__, description="Signing keys, the JWKS and session tokens.")

JWKS_MAX_AGE = 300


class SessionRequestSchema(IgnoresUnknownSchema):
    subject = fields.String(required=True, metadata={"example": "alice"})
    anonymous = fields.Boolean(load_default=False)
    entitlements = fields.List(fields.String(), load_default=list, metadata={"example": ["orders:read"]})
    ttl_seconds = fields.Integer(load_default=SESSION_TOKEN_MAX_SECONDS, metadata={"example": 600})


class SessionTokenSchema(Schema):
    token = fields.String()
    expires_at = fields.Integer()


class RotatedSchema(Schema):
    kid = fields.String()
    alg = fields.String()


@blp.route("/orgs/<slug>/.well-known/jwks.json")
class JwksViews(MethodView):
    @blp.doc(security=[])
    def get(self, slug):
        """The organization's public keys (JWKS), public and cacheable"""
        organization = get_organization(slug)
        if organization is None:
            raise not_found("organization")
        response = jsonify(jwks(organization, app_config(current_app).secret_key))
        response.headers["Cache-Control"] = f"public, max-age={JWKS_MAX_AGE}"
        return response


@blp.route("/v1/keys/rotate")
class RotateViews(MethodView):
    @blp.response(201, RotatedSchema)
    @requires(MANAGE_KEYS)
    def post(self):
        """Rotate the signing key: the next key signs at once; the old one stays published until its tokens expire"""
        principal = current_principal()
        key = rotate(principal.organization, app_config(current_app).secret_key, actor=principal.actor)
        return {"kid": key.kid, "alg": key.alg}


def _session_request(body) -> tuple[str, bool, list[str], int]:
    found: list[Violation] = []
    if not isinstance(body, dict):
        body = {}
    subject, anonymous = body.get("subject"), body.get("anonymous", False)
    entitlements, ttl = body.get("entitlements", []), body.get("ttl_seconds", SESSION_TOKEN_MAX_SECONDS)
    if not subject_fits(subject):  # refused here, not later as every call's invalid-arguments
        found.append(violation("subject", "subject-format"))
    if not isinstance(anonymous, bool):
        found.append(violation("anonymous", "field-type"))
    if (not isinstance(entitlements, list) or len(entitlements) > MAX_ENTITLEMENTS
            or not all(is_text(e) and e and " " not in e for e in entitlements)):
        found.append(violation("entitlements", "entitlements-format"))
    if isinstance(ttl, bool) or not isinstance(ttl, int) or not 0 < ttl <= SESSION_TOKEN_MAX_SECONDS:
        found.append(violation("ttl_seconds", "ttl-range"))
    if found:
        raise ServiceError(422, "invalid", "The session token request is invalid.", found)
    return subject, anonymous, entitlements, ttl


@blp.route("/v1/session-tokens")
class SessionTokenViews(MethodView):
    @blp.doc(requestBody={"content": {"application/json": {"schema": SessionRequestSchema}}})
    @blp.response(201, SessionTokenSchema)
    @requires(MINT_SESSIONS)
    def post(self):
        """Mint a session token for one of the organization's users (at most 30 minutes)"""
        subject, anonymous, entitlements, ttl = _session_request(json_body())
        organization = current_principal().organization
        config = app_config(current_app)
        token, expires_at = mint_session_token(signing_key(organization, config.secret_key),
                                               config.issuer(organization.slug), subject, anonymous,
                                               entitlements, ttl, time.time())
        return {"token": token, "expires_at": expires_at}
