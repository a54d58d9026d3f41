"""The Flask class the service runs on: Flask, less two pieces of per-request work that never change an answer, JSON
written in the order it was built, and no URL built from the request's Host.

Measured on a one-call step (bench/profiles/), Flask itself asked, about a dozen times a request, whether each hook
and view is a coroutine function (inspect walks the function each time), and built a cookie signer for every
request, the API's included, though only the dashboard's carry a session cookie. Both are documented override
points of Flask; everything else is Flask's own.

werkzeug builds its routing redirects (`/v1//tools` → `/v1/tools`, a missing trailing slash) and external URLs from
the Host header, which anyone can set: a hostile one made the service answer `308 Location: http://attacker.example/…`.
Here routing never merges slashes (`//` inside a path is a plain 404) and every absolute URL werkzeug builds takes
its scheme and host from the configured public URL (TOOLGATE_PUBLIC_URL), never from the request (docs/decisions.md).
"""
from __future__ import annotations

from inspect import iscoroutinefunction
from types import FunctionType, MethodType
from typing import Any, Callable
from urllib.parse import urlsplit

from flask import Flask, request
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface
from werkzeug.routing import Map, MapAdapter

from service.http.context import CONFIG_KEY
from service.records.logs import log_failure


class CookieSessions(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions; a request without a Cookie header starts an empty one without a signer."""

    def open_session(self, app: Flask, request: Any) -> SecureCookieSession | None:
        if app.secret_key and "HTTP_COOKIE" not in request.environ:
            return self.session_class()  # what Flask answers for a request without the cookie, made directly
        return super().open_session(app, request)


class ServiceMap(Map):
    """werkzeug's URL map without its redirects to a path it would rather have: `//` is not merged into `/` (a 404),
    and a rule's defaults are not redirected to. Only a rule ending in `/`, asked for without it, still redirects."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("merge_slashes", False)
        kwargs.setdefault("redirect_defaults", False)
        super().__init__(*args, **kwargs)


class ServiceFlask(Flask):
    """Flask with `ensure_sync` remembered per function, `CookieSessions`, unsorted JSON members, `ServiceMap`, and
    absolute URLs on the configured public URL."""

    session_interface = CookieSessions()
    url_map_class = ServiceMap

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Flask sorts every object's members; the service writes them in the order it builds them, as its orjson
        # answers do: a tool's parameters reach the model as their author listed them, on every route alike.
        self.json.sort_keys = False  # type: ignore[attr-defined]  # DefaultJSONProvider's documented setting
        #: Plain functions known not to be coroutine functions. Bounded by the code: hooks and views are made once,
        #: at start-up (a bound method is looked up by its function, so a view instance per request adds nothing).
        self._synchronous: set[FunctionType] = set()

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        function = func.__func__ if type(func) is MethodType else func
        if type(function) is FunctionType:
            if function in self._synchronous:
                return func
            if not iscoroutinefunction(function):
                self._synchronous.add(function)
                return func
        return super().ensure_sync(func)

    def create_url_adapter(self, request: Any) -> MapAdapter | None:
        # Flask binds the map to the request's Host; a redirect's Location (and any URL built `_external`) is made
        # from the adapter's scheme and host, so both are the public URL's. Matching does not read them: routes are
        # not host-matched, so the adapter's subdomain (""), not its host, is what a route is matched on.
        adapter = super().create_url_adapter(request)
        config = self.extensions.get(CONFIG_KEY)
        if adapter is not None and request is not None and config is not None:
            public = urlsplit(config.public_url)
            adapter.url_scheme, adapter.server_name = public.scheme, public.netloc
        return adapter

    def log_exception(self, exc_info: Any) -> None:
        # Flask's own line ("Exception on /path [METHOD]"), as one JSON line of the service's logs with the traceback
        # inside it, whatever handlers Flask would have given `app.logger` (a multi-line traceback on stderr).
        log_failure(f"Exception on {request.path} [{request.method}]", exc_info[1])
