"""Several worker processes: gunicorn's gevent workers, each building the app with the same factory.

`toolgate serve --workers N` runs this with the CLI's settings. Under gunicorn directly,
`gunicorn -k service.wsgi.Worker -w 4 -b 0.0.0.0:8080 service.wsgi:app` reads the settings from TOOLGATE_*;
`app` is built on first access, in the worker, after gunicorn's gevent worker has patched the
standard library. Every worker gets its own database pool: nothing is built before the fork.

`Worker` is gunicorn's gevent worker serving with the service's own server (service.server): the head read in one
strict pass, every client held to the app's deadlines, and the connections capped with the excess shed at once.
gunicorn's own gevent server has none of these: past its `worker_connections` it stops accepting, and the kernel's
backlog fills behind a few thousand idle sockets (issue 30: 9,000 of them took `/healthz` away from two workers).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from gunicorn.workers.ggevent import GeventPyWSGIWorker

from service.server import ServiceHandler, service_server

if TYPE_CHECKING:
    import socket

    from flask import Flask


def _worker_server(listener, application, spawn=None, handler_class=None, **kwargs):
    """The server gunicorn's gevent worker builds for each listener: the service's (its pool and handler replaced)."""
    return service_server(listener, application, **kwargs)


class Worker(GeventPyWSGIWorker):
    """gunicorn's gevent worker, serving through the service's server: its deadlines, its cap, its handler."""

    server_class = staticmethod(_worker_server)
    wsgi_handler = ServiceHandler


#: A worker busy longer than this without a heartbeat is restarted; well above the 10 s call deadline.
WORKER_TIMEOUT_SECONDS = 60


def _patch_database_driver() -> None:
    # psycopg2 blocks in C; psycogreen makes its waits cooperative, as service.entry does.
    from psycogreen.gevent import patch_psycopg

    patch_psycopg()


def serve_workers(factory: Callable[[], "Flask"], listener: socket.socket, workers: int) -> None:
    """Run `factory`'s app under gunicorn with `workers` gevent worker processes on `listener` (already bound,
    so the URL printed before this is the true one) until stopped: SIGTERM is a graceful stop."""
    from gunicorn.app.base import BaseApplication

    from service.limits import STOP_GRACE_SECONDS
    from serving import LISTEN_BACKLOG

    fd = listener.detach()  # gunicorn owns the socket from here (it closes the number it is given)

    class _Toolgate(BaseApplication):
        def load_config(self) -> None:
            settings = {
                "bind": f"fd://{fd}",  # our bound socket: the printed URL is already true
                "workers": workers,
                "worker_class": Worker,
                "backlog": LISTEN_BACKLOG,
                "timeout": WORKER_TIMEOUT_SECONDS,
                "graceful_timeout": STOP_GRACE_SECONDS,
                "accesslog": None,
                "preload_app": False,  # each worker opens its own database connections after the fork
                "post_fork": lambda _server, _worker: _patch_database_driver(),
                "post_worker_init": lambda _worker: _settle_process(),  # the worker's app is built
                "worker_exit": lambda _server, _worker: _stop_tracing(),  # its last spans leave before it does
            }
            for name, value in settings.items():
                self.cfg.set(name, value)

        def load(self) -> "Flask":
            return factory()

    _Toolgate().run()


def _stop_tracing() -> None:
    from service import tracing

    tracing.stop()


def _settle_process() -> None:
    from serving import settle_process

    settle_process()


#: gunicorn's app, built on first access (`__getattr__`): declared only, so that the first access builds it.
app: Flask


def __getattr__(name: str) -> Any:
    if name == "app":  # `gunicorn service.wsgi:app`: built in the worker, from the environment
        _patch_database_driver()
        from service import create_app

        global app
        app = create_app()
        _settle_process()
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
