"""The Flask class the service runs on: Flask, less two pieces of per-request work that never change an answer, and
JSON written in the order it was built.

Measured on a one-call step (bench/profiles/), Flask itself asked, about a dozen times a request, whether each hook
and view is a coroutine function (inspect walks the function each time), and built a cookie signer for every
request, the API's included, though only the dashboard's carry a session cookie. Both are documented override
points of Flask; everything else is Flask's own.
"""
from __future__ import annotations

from inspect import iscoroutinefunction
from types import FunctionType, MethodType
from typing import Any, Callable

from flask import Flask
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface


class CookieSessions(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions; a request without a Cookie header starts an empty one without a signer."""

    def open_session(self, app: Flask, request: Any) -> SecureCookieSession | None:
        if app.secret_key and "HTTP_COOKIE" not in request.environ:
            return self.session_class()  # what Flask answers for a request without the cookie, made directly
        return super().open_session(app, request)


class ServiceFlask(Flask):
    """Flask with `ensure_sync` remembered per function, `CookieSessions`, and unsorted JSON members."""

    session_interface = CookieSessions()

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
