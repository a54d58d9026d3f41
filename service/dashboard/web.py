"""The dashboard's blueprint and what every page shares: roles, CSRF, errors as pages, security headers."""
from __future__ import annotations

import logging
from datetime import datetime, timezone
from functools import wraps
from typing import Any

from flask import Blueprint, current_app, flash, g, make_response, redirect, render_template, request, session, url_for

from service.dashboard.forms import errors_by_field, field_id, field_label, in_field_order
from service.dashboard.readable import breaks
from service.dashboard.signin import configured, csrf_ok, csrf_token, signed_in
from service.database import UNAVAILABLE, unavailable_error
from service.errors import ServiceError, request_too_large
from service.limits import MAX_URL_CHARS
from service.roles import MANAGE_KEYS, MINT_SESSIONS, POWERS, PUBLISH, READ, READ_CALLS, WRITE_DRAFTS, may, require

log = logging.getLogger(__name__)
blp = Blueprint("dashboard", __name__, template_folder="templates", static_folder="static",
                static_url_path="/static/dashboard")

#: Every asset is the service's own (no CDN), scripts come only from files, and no page can be framed.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
WRITES = ("POST", "PUT", "PATCH", "DELETE")
#: The writes a visitor may send: every other needs someone signed in, checked before its form is read.
VISITOR_WRITES = frozenset({"dashboard.signin_submit", "dashboard.signout"})
#: The most a visitor's form may declare: an API key, where to go next (a URL, at most MAX_URL_CHARS) and the CSRF
#: token. Anyone can have a session and its token, so without this a visitor could make the service hold the
#: service's whole body bound (a MiB) for every connection it opens; refused from the declared length, before reading.
VISITOR_FORM_BYTES = 2 * MAX_URL_CHARS
NO_SECRET = "This service has no TOOLGATE_SECRET_KEY, so the dashboard cannot sign anyone in."
CSRF_FAILED = "This form has expired or did not come from this dashboard. Reload the page and try again."


def principal():
    """The signed-in principal; only called inside views guarded by `requires`."""
    return signed_in()


def powers() -> frozenset[str]:
    """What the signed-in key's role may do (nothing for a visitor)."""
    who = signed_in()
    return POWERS[who.role] if who else frozenset()


def reads_calls() -> bool:
    """Whether the signed-in key may read the call log (GET /v1/calls answers it the same way)."""
    who = signed_in()
    return who is not None and may(who.role, READ_CALLS)


def requires(power: str):
    """Send a visitor to sign in, and refuse a key whose role lacks `power` (`service.roles`, the table every edge
    checks)."""

    def decorate(view):
        @wraps(view)
        def guarded(*args, **kwargs):
            who = signed_in()
            if who is None:
                target = request.full_path.rstrip("?") if request.method == "GET" else None
                return redirect(url_for("dashboard.signin", next=target))
            require(who, power)
            return view(*args, **kwargs)

        return guarded

    return decorate


def page(template: str, status: int = 200, *, violations=(), **context: Any):
    """Render a dashboard page, with every violation by field for the inputs to show beside themselves, and in the
    order of the fields for the summary."""
    violations = in_field_order(violations)
    return render_template(f"dashboard/{template}", violations=violations, errors=errors_by_field(violations),
                           **context), status


def done(message: str, endpoint: str, **values: Any):
    """After a successful write: say so once, and redirect so a reload does not repeat it."""
    flash(message)
    return redirect(url_for(endpoint, **values))


def when(timestamp: float | None, *, seconds: bool = False) -> str:
    """A stored time as the pages show it, in UTC; to the second where calls a second apart must differ."""
    if timestamp is None:
        return ""
    shape = "%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC"
    return datetime.fromtimestamp(timestamp, timezone.utc).strftime(shape)


@blp.context_processor
def _shared() -> dict[str, Any]:
    return {"principal": signed_in(), "powers": powers(), "reads_calls": reads_calls(), "csrf_token": csrf_token,
            "field_id": field_id, "field_label": field_label, "when": when, "breaks": breaks, "READ": READ,
            "WRITE_DRAFTS": WRITE_DRAFTS, "PUBLISH": PUBLISH, "MINT_SESSIONS": MINT_SESSIONS,
            "MANAGE_KEYS": MANAGE_KEYS}


@blp.before_request
def _guard():
    """No page without cookie keys to sign in with; no write without this session's CSRF token.

    A write is refused before its form is read when its session holds no token (it cannot be this dashboard's form),
    or when it needs someone signed in and nobody is: a visitor's body is never waited for."""
    if not configured():
        if request.endpoint == "dashboard.static":
            return None
        return page("error.html", 503, title="Dashboard unavailable", message=NO_SECRET)
    if request.method in WRITES:
        if not isinstance(session.get("csrf"), str):
            return page("error.html", 400, title="Form expired", message=CSRF_FAILED)
        if request.endpoint not in VISITOR_WRITES and signed_in() is None:
            return redirect(url_for("dashboard.signin"))
        if request.endpoint in VISITOR_WRITES and _past_visitor_bound():
            raise request_too_large(VISITOR_FORM_BYTES)
        if not csrf_ok(request.form.get("csrf_token")):
            return page("error.html", 400, title="Form expired", message=CSRF_FAILED)
    return None


def _past_visitor_bound() -> bool:
    """A visitor's form declared past VISITOR_FORM_BYTES, or sent chunked, with no length to judge it by up front."""
    declared = request.content_length
    return (request.headers.get("Transfer-Encoding") is not None and declared is None) or (declared or 0) > \
        VISITOR_FORM_BYTES


@blp.after_request
def _headers(response):
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    if request.endpoint != "dashboard.static":
        # Pages show an organization's definitions: never keep them in a shared or back-button cache.
        response.headers["Cache-Control"] = "no-store"
    return response


#: The refusals of routing itself, which ask the database who is signed in so the page keeps its navigation.
ROUTING_STATUSES = (404, 405)
TITLES = {400: "Bad request", 401: "Not signed in", 403: "Not allowed", 404: "Not found", 405: "Not allowed here",
          409: "Conflict", 413: "Too large", 429: "Busy", 500: "Something went wrong", 503: "Unavailable"}


@blp.errorhandler(ServiceError)
def _service_error(error: ServiceError):
    # Who is signed in shows only if the request already knew: an error before the view (a body too large, the
    # database away) must not send the page to the database. A path no route matches (404) or a method its routes
    # do not take (405) is the exception: the database is there, and a person signed in keeps the navigation to
    # find their way back. The shared context is given here too, since such a path has no blueprint to add it.
    if error.status in ROUTING_STATUSES and "principal" not in g:
        try:
            signed_in()
        except UNAVAILABLE:
            g.principal = None
    g.setdefault("principal", None)
    body, status = page("error.html", error.status, title=TITLES.get(error.status, "Refused"),
                        message=error.message, violations=error.violations, **_shared())
    headers = {} if error.retry_after is None else {"Retry-After": str(error.retry_after)}
    return _headers(make_response(body, status, headers))


_OTHERS = "toolgate_dashboard_others"


def owns(path: str) -> bool:
    """Whether `path` is the dashboard's: it is mounted at /, so every path but those of the API, the MCP endpoint,
    the JWKS, metrics, health and the API's documentation (the first segments of their routes)."""
    others = current_app.extensions.get(_OTHERS)
    if others is None:
        others = current_app.extensions[_OTHERS] = frozenset(
            rule.rule.split("/")[1] for rule in current_app.url_map.iter_rules()
            if not rule.endpoint.startswith(f"{blp.name}."))
    return path.split("/")[1] not in others


def error_page(error: ServiceError):
    """The error page for any error on the dashboard's paths, a route's or none's (404, 405, 413, 500, 503...);
    None elsewhere, where the API answers in JSON."""
    if request.blueprint != blp.name and not owns(request.path):
        return None
    return _service_error(error)


def _database_unavailable(error: Exception):
    """The database could not serve: the error page, rendered without asking the database who is signed in."""
    log.warning("the database could not serve a dashboard page: %s: %s", type(error).__name__, error)
    return _service_error(unavailable_error())


for _failure in UNAVAILABLE:
    blp.register_error_handler(_failure, _database_unavailable)
