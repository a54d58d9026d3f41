"""The registry: tool definitions and every rule (their sentences are `service.catalogue`'s), drafts and published
versions, projects and pins.

Plain Python over the models; no Flask. The API, the MCP server and the dashboard all call these functions.
"""
from service.registry.freezing import Publication, Repin, will_move
from service.registry.organizations import (
    ROLES,
    Principal,
    authenticate_api_key,
    create_api_key,
    create_organization,
    get_organization,
    looks_like_api_key,
)
from service.registry.projects import (
    create_project,
    get_project,
    list_projects,
    project_view,
    publish_project,
    save_project_draft,
    start_project_draft,
)
from service.registry.rules import check_definition
from service.registry.tools import (
    REGISTRATION_FIELDS,
    definition_of,
    etag,
    get_tool,
    get_version,
    list_tools,
    publish_tool,
    published_read_only,
    register_tool,
    relabel,
    save_draft,
    start_draft,
    tool_lines,
    tool_view,
    version_view,
)

__all__ = [
    "Principal",
    "Publication",
    "REGISTRATION_FIELDS",
    "ROLES",
    "Repin",
    "authenticate_api_key",
    "check_definition",
    "create_api_key",
    "create_organization",
    "create_project",
    "definition_of",
    "etag",
    "get_organization",
    "get_project",
    "get_tool",
    "get_version",
    "list_projects",
    "list_tools",
    "looks_like_api_key",
    "project_view",
    "publish_project",
    "publish_tool",
    "published_read_only",
    "register_tool",
    "relabel",
    "save_draft",
    "save_project_draft",
    "start_draft",
    "start_project_draft",
    "tool_lines",
    "tool_view",
    "version_view",
    "will_move",
]
