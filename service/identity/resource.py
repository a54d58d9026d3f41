"""RFC 9728 protected-resource metadata for a project's MCP server, and the 401 header that points at it.

A project's name is unique only within its organization, so the resource says which organization it belongs to with
an `org` query (`/mcp/projects/{project}?org={slug}`); without one, the organization is the one that has a project
of that name, when exactly one has. The metadata's address is the resource's with
`/.well-known/oauth-protected-resource` inserted before its path, the query kept (RFC 9728 §3.1).
"""
from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def resource_path(project: str, org: str | None = None) -> str:
    """A project's MCP server's path (and query), as the resource identifier ends."""
    query = f"?{urlencode({'org': org})}" if org else ""
    return f"/mcp/projects/{quote(project, safe='')}{query}"


def resource_url(public_url: str, project: str, org: str | None = None) -> str:
    """The project's MCP server as a resource identifier: built from the configured public URL, never the Host."""
    return public_url.rstrip("/") + resource_path(project, org)


def resource_metadata_url(public_url: str, project: str, org: str | None = None) -> str:
    """Where the resource's metadata is (what a 401's `resource_metadata` names)."""
    return public_url.rstrip("/") + WELL_KNOWN + resource_path(project, org)


def www_authenticate(public_url: str, project: str, org: str | None = None) -> str:
    """The `WWW-Authenticate` value of a 401 from a project's MCP server (CONTRACT, MCP)."""
    return f'Bearer resource_metadata="{resource_metadata_url(public_url, project, org)}"'


def protected_resource_metadata(public_url: str, project: str, org: str | None,
                                issuers: list[str]) -> dict[str, Any]:
    """The metadata document: the resource, the organization's providers as its authorization servers, and that
    tokens ride in the Authorization header."""
    return {
        "resource": resource_url(public_url, project, org),
        "authorization_servers": sorted(dict.fromkeys(issuers)),
        "bearer_methods_supported": ["header"],
        "resource_name": project,
    }
