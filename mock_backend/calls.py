"""Recording every request the mock receives, so a check can see what the platform actually did.

`Recorder` is WSGI middleware: it stamps `started` when a request arrives and `ended` when its
response has been sent (or abandoned), so overlapping intervals show calls that ran in parallel.
Views add what only they know (the tool the route serves, the rejection reason, the verified
subject and turn, the Authorization header it carried) to the entry found under `environ[CALL_KEY]`.

The record is where a check reads the assertion a call carried (`authorization`), by the entry's `id`, which the
echo names: an answer never carries it, since whatever an endpoint answers goes to the model.
"""
from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from mock_backend.faults import SocketFault

#: The ring keeps this many calls; older ones fall off.
MAX_RECORDED_CALLS = 10_000

#: Where a request's entry lives in its WSGI environ.
CALL_KEY = "mock_backend.call"

#: Bookkeeping endpoints are not calls of the platform, so they are not recorded.
UNRECORDED_PATHS = frozenset({"/_calls", "/_health"})


class CallLog:
    """A bounded ring of call entries, oldest first."""

    def __init__(self, size: int = MAX_RECORDED_CALLS) -> None:
        self._calls: deque[dict[str, Any]] = deque(maxlen=size)
        self._ids = itertools.count(1)

    def start(self, method: str, path: str, query: str) -> dict[str, Any]:
        """A new entry for a request that has just arrived, numbered in arrival order; its owner fills in the
        rest."""
        entry: dict[str, Any] = {
            "id": next(self._ids), "tool": None, "method": method, "path": path, "query": query,
            "started": time.time(), "ended": None, "status": None,
            "reason": None, "fault": None, "sub": None, "turn": None, "authorization": None,
        }
        self._calls.append(entry)
        return entry

    def snapshot(self) -> list[dict[str, Any]]:
        """Copies of every recorded entry, oldest first."""
        return [dict(entry) for entry in self._calls]

    def clear(self) -> None:
        """Forget every recorded call."""
        self._calls.clear()


class Recorder:
    """WSGI middleware recording each request into a `CallLog`."""

    def __init__(self, app: Callable, calls: CallLog) -> None:
        self.app = app
        self.calls = calls

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path in UNRECORDED_PATHS:
            return self.app(environ, start_response)
        entry = self.calls.start(environ.get("REQUEST_METHOD", ""), path, environ.get("QUERY_STRING", ""))
        environ[CALL_KEY] = entry

        def recording_start_response(status: str, headers: list, exc_info: Any = None) -> Callable:
            entry["status"] = int(status.split(" ", 1)[0])
            return start_response(status, headers, exc_info)

        try:
            body = self.app(environ, recording_start_response)
        except BaseException:
            entry["ended"] = time.time()
            raise
        return _RecordedBody(body, entry)


class _RecordedBody:
    """A response body that stamps `ended` when the server closes it (WSGI always does)."""

    def __init__(self, body: Iterable[bytes], entry: dict[str, Any]) -> None:
        self._body = body
        self._entry = entry

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._body
        except SocketFault as fault:
            # The connection is broken on purpose: no complete response, so no status.
            self._entry["fault"] = fault.kind
            self._entry["status"] = None
            raise

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._entry["ended"] = time.time()
