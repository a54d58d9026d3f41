"""What every HTTP edge reads from the app it runs in: the Config it was built with, and which endpoints take no
database connection. Set by `create_app`; read here, so no edge imports the app root back."""
from __future__ import annotations

from typing import TYPE_CHECKING

from service.config import Config
from service.server import client_gone

if TYPE_CHECKING:
    from flask import Flask

CONFIG_KEY = "toolgate_config"
#: Where the app keeps its work gate (service.gate), for metrics and tests.
WORK_GATE_KEY = "toolgate_work_gate"
#: Where the app keeps the one Dispatcher every edge runs calls with.
DISPATCHER_KEY = "toolgate_dispatcher"

#: Endpoints that take no connection up front: liveness, metrics and static files never touch the database, so they
#: answer while it is away or its pool is busy; readiness asks it itself, to report what it finds.
WITHOUT_DATABASE = frozenset({"ops.AliveViews", "ops.MetricsViews", "ops.ReadyViews", "static", "dashboard.static",
                              "swagger_assets", "api-docs.openapi_json", "api-docs.openapi_swagger_ui"})
#: ...and those that take it at their first query instead. A step whose session token, turn and signing key are
#: already known reads nothing before its calls, and gives any connection back before them anyway: it usually takes
#: one only to record its calls, which saves a checkout and a return on every step (bench/profiles/).
NO_CONNECTION_UP_FRONT = WITHOUT_DATABASE | {"conversations.StepViews"}
#: Endpoints that take no place at the work gate (service.gate): the probes, metrics and static files, answered at
#: once however busy the process is. Readiness is among them: it reports the database, not the queue.
WITHOUT_WORK_GATE = WITHOUT_DATABASE


def app_config(app: "Flask") -> Config:
    """The Config an app was built with."""
    return app.extensions[CONFIG_KEY]


def client_left() -> bool:
    """Whether the client of the request being handled has closed its connection: work done only for its answer
    (an import's reading) can stop."""
    from flask import request

    return client_gone(request.environ)
