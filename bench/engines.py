"""The alternative HTTP clients, on the platform's own path, for side-by-side figures.

The platform sends calls with geventhttpclient; `requests` (its former client) stays in
service.dispatch.transport as the reference. urllib3 used directly lives here, since only the
benchmarks use it: the same guarded connection pools requests sits on, without requests on top.
"""
from __future__ import annotations

from service.dispatch import transport
from service.dispatch.build import BuiltRequest
from service.dispatch.guard import AddressGuard
from service.dispatch.reading import CHUNK_BYTES
from service.dispatch.session import DEFAULT_HEADERS
from service.dispatch.transport import CallOutcome, session_for

ENGINES = ("geventhttpclient", "urllib3", "requests")
#: The platform's own engine with call records written after the answer (bench/platform.py).
DEFERRED = "deferred-records"


def variant(name: str) -> tuple[str, bool]:
    """(engine, defer records) for a column name: an engine, or DEFERRED."""
    return ("geventhttpclient", True) if name == DEFERRED else (name, False)


def exchange_urllib3(guard: AddressGuard, request: BuiltRequest, authorization: str, deadline: float,
                     cap: int) -> CallOutcome:
    """One call through urllib3's guarded pools directly: no redirects, no retries, body streamed."""
    manager = session_for(guard).get_adapter(request.url).poolmanager
    headers = {**DEFAULT_HEADERS, **request.headers, "Authorization": authorization}
    response = manager.urlopen(request.method, request.url, body=request.body, headers=headers, redirect=False,
                               retries=False, preload_content=False, timeout=deadline)
    complete = False
    try:
        chunks = response.stream(CHUNK_BYTES, decode_content=True)
        outcome = transport._judge(response.status, response.headers.get("Content-Type"), chunks, cap)
        complete = response.isclosed() or response.length_remaining == 0
        return outcome
    finally:
        if not complete:
            response.close()  # cut off or unread: the connection is not reused
        response.release_conn()


def use(engine: str) -> None:
    """Make this process's platform send calls with `engine`."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}")
    transport.EXCHANGES.setdefault("urllib3", exchange_urllib3)
    transport.ENGINE = engine
