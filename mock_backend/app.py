"""Assembling the mock backend: the demo shop, the misbehaviour routes, the call recorder."""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from mock_backend import behaviours, listings, shop
from mock_backend.calls import CallLog, Recorder
from mock_backend.guard import VERIFIER_KEY
from mock_backend.jwks import PINNED_ALGORITHMS, REFETCH_COOLDOWN_SECONDS, Fetcher
from mock_backend.verify import Verifier

#: Request bodies larger than this are refused (413): the platform's own cap is far below it.
MAX_REQUEST_BYTES = 1_048_576


def create_app(issuers: Iterable[str], broken: str | None = None,
               jwks_fetcher: Fetcher | None = None,
               refetch_cooldown: float = REFETCH_COOLDOWN_SECONDS,
               requires_approval: Iterable[str] = (), *,
               algorithms: Iterable[str] = PINNED_ALGORITHMS, single_use: Iterable[str] = (),
               clock: Callable[[], float] = time.monotonic) -> Flask:
    """The mock backend trusting exactly `issuers`; `broken` names one check to switch off
    (one of verify.BROKEN_MODES; anything else is a ValueError); `jwks_fetcher(url)` replaces
    the HTTP fetch of key sets; `refetch_cooldown` is how often an unknown `kid` may refetch
    them (tests shorten it, so a key rotation is picked up without a ten-second wait);
    `requires_approval` names the tools whose calls are refused without the person's approval
    (an `approval` claim), as an integrator's backend refuses consequential calls; `algorithms` are those it
    verifies with (default: each the platform signs with; an integrator pins its organization's one);
    `single_use` names the tools that take each assertion once, refusing a `jti` taken before; `clock` is what the key
    sets' lifetimes and cooldowns are measured by (a test's, to pass a cooldown without waiting for it)."""
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    app.json.sort_keys = False
    # Keep `//` in paths as sent: the echo route must show an empty path value, not a redirect.
    app.url_map.merge_slashes = False
    app.extensions[VERIFIER_KEY] = Verifier(list(issuers), broken, jwks_fetcher, refetch_cooldown,
                                              requires_approval, algorithms=algorithms, single_use=single_use,
                                              clock=clock)
    app.extensions[shop.CARTS_KEY] = {}
    calls = CallLog()

    app.register_blueprint(shop.blp)
    app.register_blueprint(behaviours.blp)
    app.register_blueprint(listings.blp)

    @app.get("/_health")
    def health():
        """Up."""
        return jsonify(status="ok")

    @app.get("/_calls")
    def list_calls():
        """Every recorded call, oldest first, or only those of `?tool=` (unauthenticated: a test
        harness reads it)."""
        tool = request.args.get("tool")
        return jsonify(calls=[call for call in calls.snapshot() if tool in (None, call["tool"])])

    @app.delete("/_calls")
    def clear_calls():
        """Forget the recorded calls."""
        calls.clear()
        return "", 204

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        # Routing errors (404, 405, 413) in the same JSON shape as everything else, keeping
        # their headers (a 405's Allow).
        response = error.get_response()
        response.set_data(json.dumps({"error": (error.name or "error").lower()}))
        response.content_type = "application/json"
        return response

    # The recorder wraps the whole app, so unrouted and rejected requests are recorded too.
    app.wsgi_app = Recorder(app.wsgi_app, calls)
    app.extensions["mock_backend.calls"] = calls
    return app
