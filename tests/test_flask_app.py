"""The service's Flask class: what it skips changes no answer."""
import pytest
from flask import request, session
from flask.sessions import SecureCookieSessionInterface

from service.http.flask_app import CookieSessions, ServiceFlask


def make_app() -> ServiceFlask:
    app = ServiceFlask(__name__)
    app.secret_key = "s" * 32

    @app.get("/count")
    def count():
        session["n"] = session.get("n", 0) + 1
        return {"n": session["n"]}

    return app


def test_a_plain_function_is_judged_once_and_returned_as_is():
    app = make_app()

    def view():
        return "ok"

    class View:
        def get(self):
            return "ok"

    assert app.ensure_sync(view) is view and app.ensure_sync(view) is view
    bound = [View().get for _ in range(5)]
    assert all(app.ensure_sync(method) is method for method in bound)
    assert app._synchronous == {view, View.get}  # one entry per function, not per view instance


def test_a_coroutine_function_still_goes_to_flask():
    app = make_app()
    calls = []
    app.async_to_sync = lambda func: calls.append(func) or "wrapped"

    async def view():
        return "ok"

    assert app.ensure_sync(view) == "wrapped" and app.ensure_sync(view) == "wrapped" and calls == [view, view]
    assert view not in app._synchronous


def test_a_request_without_a_cookie_builds_no_signer_and_one_with_it_still_reads_it(monkeypatch):
    app = make_app()
    client = app.test_client()
    built = []
    real = SecureCookieSessionInterface.get_signing_serializer
    monkeypatch.setattr(CookieSessions, "get_signing_serializer",
                        lambda self, a: built.append(1) or real(self, a))
    assert client.get("/count").json == {"n": 1}  # saving the new cookie signs it: one signer
    assert len(built) == 1
    assert client.get("/count").json == {"n": 2}  # the cookie came back: read (and signed again)
    assert len(built) == 3


@pytest.mark.parametrize("secret", [None, ""])
def test_without_a_secret_it_answers_as_flask_does(secret):
    app = make_app()
    app.secret_key = secret
    with app.test_request_context("/count"):
        assert app.session_interface.open_session(app, request) is None
