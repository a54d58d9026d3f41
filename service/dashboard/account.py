"""Signing in with an organization API key, and signing out."""
from __future__ import annotations

from flask import redirect, request, url_for

from service.catalogue import Violation
from service.dashboard.signin import safe_next, sign_in, sign_out, signed_in
from service.dashboard.web import blp, done, page
from service.errors import ServiceError
from service.roles import READ, may

NO_DASHBOARD = "A backend key only mints session tokens; sign in with an admin or agent key."


@blp.get("/")
def home():
    """The Tools screen for someone signed in; the sign-in page for anyone else."""
    return redirect(url_for("dashboard.tools" if signed_in() else "dashboard.signin"))


@blp.get("/signin")
def signin():
    return page("signin.html", next=request.args.get("next", ""))


@blp.post("/signin")
def signin_submit():
    target = request.form.get("next", "")
    try:
        who = sign_in(request.form.get("api_key", ""))
    except ServiceError as error:
        return page("signin.html", 401, next=target,
                    violations=[Violation("api_key", error.code, "That API key was not accepted.")])
    if not may(who.role, READ):
        sign_out()
        return page("signin.html", 403, next=target, violations=[Violation("api_key", "forbidden", NO_DASHBOARD)])
    return redirect(safe_next(target) or url_for("dashboard.tools"))  # a path on this site only, never elsewhere


@blp.post("/signout")
def signout():
    sign_out()
    return done("Signed out.", "dashboard.signin")
