"""The app-wide HTTP layer every edge (REST, MCP, dashboard) stands on: the app's Config, who is calling, the request
hooks and the one set of error handlers. `create_app` installs it; edges import it, never the app root."""
from __future__ import annotations

from service.http.arrival import admitting, install_arrival
from service.http.context import CONFIG_KEY, DISPATCHER_KEY, WITHOUT_DATABASE, app_config, client_left
from service.http.credentials import bearer_token
from service.http.errors import ERROR_PAGE, error_response, install_error_handlers
from service.http.hooks import install_admission, install_observability

__all__ = ["CONFIG_KEY", "DISPATCHER_KEY", "ERROR_PAGE", "WITHOUT_DATABASE", "admitting", "app_config",
           "bearer_token", "client_left", "error_response", "install_admission",
           "install_arrival", "install_error_handlers", "install_observability"]
