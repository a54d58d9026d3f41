"""The MCP endpoint: agents manage tool drafts over the Model Context Protocol, and never publish.

`POST /mcp` speaks JSON-RPC 2.0 over MCP's Streamable HTTP transport (`protocol`), offers the agent tools
(`tools`, with their input schemas in `schemas`) and is mounted by `register` (`routes`).
"""


def register(app) -> None:
    """Mount POST /mcp on `app`."""
    from service.mcp.routes import blp

    app.register_blueprint(blp)
