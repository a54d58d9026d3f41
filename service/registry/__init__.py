"""The registry: tool definitions and every rule (their sentences are `service.catalogue`'s), drafts and published
versions, projects and pins.

Plain Python over the models; no Flask. The API, the MCP server and the dashboard all call these functions.
"""
from service.registry.freezing import Publication, Repin, will_move
from service.registry.listing import (
    Page,
    check_page,
    project_page,
    project_views,
    tool_page,
    tool_views,
    tools_named,
)
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
    tool_view,
    version_view,
)

__all__ = [
    "Page",
    "Principal",
    "Publication",
    "REGISTRATION_FIELDS",
    "ROLES",
    "Repin",
    "authenticate_api_key",
    "check_definition",
    "check_page",
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
    "project_page",
    "project_view",
    "project_views",
    "publish_project",
    "publish_tool",
    "published_read_only",
    "register_tool",
    "relabel",
    "save_draft",
    "save_project_draft",
    "start_draft",
    "start_project_draft",
    "tool_page",
    "tool_view",
    "tool_views",
    "tools_named",
    "version_view",
    "will_move",
]
