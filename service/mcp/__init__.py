"""The MCP endpoint: agents manage tool drafts over the Model Context Protocol, and never publish.

`POST /mcp` speaks JSON-RPC 2.0 over MCP's Streamable HTTP transport (`protocol`), offers the agent tools
(`tools`, with their input schemas in `schemas`) and is mounted by `register` (`routes`).

`/mcp/projects/<project>` serves a published project to the person holding a session token (`project_routes`): the
session is a conversation (`project_session`), its methods are the REST conversation's code (`project_server`), and
a call that needs the person's approval asks them in the client (`elicitation`). Both share the wire (`protocol`,
`transport`).
"""


def register(app) -> None:
    """Mount /mcp and /mcp/projects/<project> on `app`."""
    from service.mcp.project_routes import blp as project_blp
    from service.mcp.routes import blp

    app.register_blueprint(blp)
    app.register_blueprint(project_blp)
    from service.mcp.project_plain import install_project_route

    install_project_route(app)  # after its rule is in the URL map
