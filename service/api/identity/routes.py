"""/v1/identity-providers: the organization's own OpenID providers, whose access tokens act as session tokens; and
the RFC 9728 metadata of each project's MCP server, naming those providers as its authorization servers."""
from __future__ import annotations

from flask import current_app, request
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields

from service import identity
from service.api.auth import current_principal, requires
from service.api.body import json_body
from service.api.document import route_refusal
from service.api.schemas import IgnoresUnknownSchema
from service.dispatch import AddressGuard
from service.errors import not_found
from service.http import app_config
from service.identity.resource import protected_resource_metadata
from service.identity.store import organization_of_project
from service.roles import MANAGE_KEYS
from service.text import is_text

blp = Blueprint("identity", __name__, description="The organization's own identity providers.")


class ProviderRequestSchema(IgnoresUnknownSchema):
    # No example: the API's fuzzing sends examples, and an issuer is fetched (its discovery document) at once.
    issuer = fields.String(required=True, metadata={
        "description": "Exactly as the provider's tokens name it, such as https://example.eu.auth0.com/."})
    audience = fields.String(required=True, metadata={"example": "https://tools.example.com/mcp/projects/shop"})
    subject_claim = fields.String(load_default="sub")
    entitlements_claim = fields.String(load_default="scope")
    algorithms = fields.List(fields.String(), metadata={"example": ["RS256", "ES256"]})


class ProviderSchema(Schema):
    name = fields.String()
    issuer = fields.String()
    audience = fields.String()
    subject_claim = fields.String()
    entitlements_claim = fields.String()
    algorithms = fields.List(fields.String())
    jwks_uri = fields.String()
    revision = fields.Integer()
    created_at = fields.Float()
    updated_at = fields.Float()


class ProviderListSchema(Schema):
    identity_providers = fields.List(fields.Nested(ProviderSchema))


class ResourceMetadataSchema(Schema):
    resource = fields.String()
    authorization_servers = fields.List(fields.String())
    bearer_methods_supported = fields.List(fields.String())
    resource_name = fields.String()


def platform_issuer_prefix() -> str:
    """Where the platform's own organizations' issuers begin: never a provider."""
    return app_config(current_app).issuer("")


def outbound_guard() -> AddressGuard:
    """The guard every outbound fetch goes through: the service's dispatcher's, so its allow-list is the config's."""
    from service.http import DISPATCHER_KEY

    return current_app.extensions[DISPATCHER_KEY].guard


@blp.route("/v1/identity-providers")
class ProviderViews(MethodView):
    @blp.response(200, ProviderListSchema)
    @requires(MANAGE_KEYS)
    def get(self):
        """List the identity providers the organization trusts"""
        rows = identity.list_providers(current_principal().organization)
        return {"identity_providers": [row.view() for row in rows]}


@blp.route("/v1/identity-providers/<name>")
class ProviderByNameViews(MethodView):
    @blp.doc(requestBody={"content": {"application/json": {"schema": ProviderRequestSchema}}})
    @blp.response(200, ProviderSchema)
    @blp.alt_response(409, **route_refusal("`provider-taken`: this issuer and audience are trusted already."))
    @requires(MANAGE_KEYS)
    def put(self, name):
        """Trust an identity provider (add or change it): its discovery document and key set are read first"""
        principal = current_principal()
        row, _ = identity.trust_provider(principal.organization, name, json_body(), principal.actor,
                                         outbound_guard(), platform_issuer_prefix())
        return row.view()

    @blp.response(200, ProviderSchema)
    @requires(MANAGE_KEYS)
    def get(self, name):
        """Read one identity provider"""
        return identity.get_provider(current_principal().organization, name).view()

    @blp.response(204)
    @requires(MANAGE_KEYS)
    def delete(self, name):
        """Stop trusting an identity provider: its tokens are refused at once"""
        principal = current_principal()
        identity.remove_provider(principal.organization, name, principal.actor)


@blp.route("/.well-known/oauth-protected-resource/mcp/projects/<project>")
class ResourceMetadataViews(MethodView):
    @blp.doc(security=[])
    @blp.response(200, ResourceMetadataSchema)
    def get(self, project):
        """A project's MCP server as an OAuth protected resource (RFC 9728): its organization's identity providers"""
        org = request.args.get("org")
        if org is not None and not is_text(org):
            raise not_found("project")
        organization = organization_of_project(project, org) if is_text(project) else None
        if organization is None:
            raise not_found("project")
        issuers = [row.issuer for row in identity.list_providers(organization)]
        return protected_resource_metadata(app_config(current_app).public_url, project, org, issuers)
