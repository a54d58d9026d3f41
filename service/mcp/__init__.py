"""The MCP endpoint (being written): agents manage tool drafts and never publish."""


def register(app) -> None:
    """Mount POST /mcp on `app`."""
