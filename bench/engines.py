"""The reference HTTP clients the platform's own is measured against: `requests` (its former client) and urllib3
used directly (what requests sits on), behind the same guards. Benchmarks only: `use(engine)` makes this process's
platform send its calls with one of them, by replacing service.dispatch.transport's exchange.

The platform sends with geventhttpclient (service.dispatch.client). These keep what made the former client safe:
each new connection resolves its host once and connects only to an address the AddressGuard allows (the one it
checked); no proxy or .netrc from the environment, no cookie kept, no redirect followed, TLS always verified.
"""
from __future__ import annotations

import http.client
import socket
import sys
from http.cookiejar import DefaultCookiePolicy
from typing import Any, Callable
from weakref import WeakKeyDictionary

import requests
import urllib3.exceptions
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.poolmanager import PoolManager
from urllib3.util.timeout import _DEFAULT_TIMEOUT

from service.dispatch import connection, transport
from service.dispatch.build import BuiltRequest
from service.dispatch.client import DEFAULT_HEADERS, HOST_POOLS
from service.dispatch.failures import TIMED_OUT, TRANSPORT_ERROR
from service.dispatch.guard import AddressGuard
from service.dispatch.reading import CHUNK_BYTES
from service.dispatch.transport import CallOutcome, judge
from service.limits import STEP_POOL_SIZE

ENGINES = ("geventhttpclient", "urllib3", "requests")
#: The platform's own engine with call records written after the answer (bench/platform.py).
DEFERRED = "deferred-records"


def variant(name: str) -> tuple[str, bool]:
    """(engine, defer records) for a column name: an engine, or DEFERRED."""
    return ("geventhttpclient", True) if name == DEFERRED else (name, False)


# ---------------------------------------------------------------- urllib3 connections that check their address

class AddressDenied(NewConnectionError):
    """Every address the host resolved to is one the guard refuses."""


class _GuardedConnectionMixin:
    """Replaces urllib3's `_new_conn`: resolve once, check each address, connect to an allowed one."""

    _dns_host: str
    host: str
    port: int
    timeout: Any
    socket_options: Any

    def __init__(self, *args: Any, guard: AddressGuard, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = guard

    def _new_conn(self) -> socket.socket:
        try:
            candidates = connection.resolve(self._dns_host, self.port)
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        denied: list[str] = []
        failure: OSError | None = None
        for family, kind, proto, _name, sockaddr in candidates:
            reason = self.guard.denial(sockaddr[0])
            if reason is not None:
                denied.append(f"{sockaddr[0]} is {reason}")
                continue
            try:
                sock = _connect(family, kind, proto, sockaddr, self.timeout, self.socket_options)
            except TimeoutError as exc:
                raise ConnectTimeoutError(self, f"connecting to {sockaddr[0]} timed out") from exc
            except OSError as exc:
                failure = exc
                continue
            sys.audit("http.client.connect", self, self.host, self.port)
            return sock
        if failure is not None:
            raise NewConnectionError(self, f"Failed to establish a new connection: {failure}")
        raise AddressDenied(self, f"{self.host} may not be reached: {'; '.join(denied) or 'no address'}")


def _connect(family: int, kind: int, proto: int, sockaddr: Any, timeout: Any, options: Any) -> socket.socket:
    sock = socket.socket(family, kind, proto)
    try:
        for option in options or ():
            sock.setsockopt(*option)
        sock.settimeout(socket.getdefaulttimeout() if timeout is _DEFAULT_TIMEOUT else timeout)
        sock.connect(sockaddr)
    except BaseException:  # any failure, a gevent.Timeout included, must not leak the socket
        sock.close()
        raise
    return sock


class _GuardedHTTPConnection(_GuardedConnectionMixin, HTTPConnection):
    pass


class _GuardedHTTPSConnection(_GuardedConnectionMixin, HTTPSConnection):
    pass


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class GuardedPoolManager(PoolManager):
    """A PoolManager whose every connection carries the guard (added when a pool is made: every key of
    `connection_pool_kw` must also be a field of urllib3's pool key)."""

    def __init__(self, guard: AddressGuard, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.guard = guard
        self.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}

    def _new_pool(self, scheme: str, host: str, port: int, request_context: dict[str, Any] | None = None
                  ) -> HTTPConnectionPool:
        context = dict(self.connection_pool_kw if request_context is None else request_context)
        context["guard"] = self.guard
        return super()._new_pool(scheme, host, port, context)


# ---------------------------------------------------------------- the requests Session on top

class _RefuseAllCookies(DefaultCookiePolicy):
    """Cookies are never stored, so none can ever be sent to another endpoint or call."""

    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def return_ok(self, cookie: Any, request: Any) -> bool:
        return False


class _NoRedirectSession(requests.Session):
    def get_redirect_target(self, resp: requests.Response) -> None:
        # With allow_redirects=False, requests still looks for a redirect to offer as `next`, and reads the whole
        # 3xx body to free the connection for it. No target, no read.
        return None


class _GuardedAdapter(HTTPAdapter):
    """An HTTPAdapter whose connections check their address, with TLS always verified, no proxy."""

    def __init__(self, guard: AddressGuard, pool_size: int = STEP_POOL_SIZE) -> None:
        self._guard = guard  # set before super().__init__, which builds the pool manager
        super().__init__(pool_connections=HOST_POOLS, pool_maxsize=pool_size, max_retries=0)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        self._pool_connections, self._pool_maxsize, self._pool_block = connections, maxsize, block
        self.poolmanager = GuardedPoolManager(self._guard, num_pools=connections, maxsize=maxsize, block=block,
                                              **pool_kwargs)

    def send(self, request: Any, stream: bool = False, timeout: Any = None, verify: Any = True,
             cert: Any = None, proxies: Any = None) -> requests.Response:
        return super().send(request, stream=stream, timeout=timeout, verify=True, cert=None, proxies=None)


def new_session(guard: AddressGuard) -> requests.Session:
    """A Session whose connections pass `guard`, sized for a step's fan-out."""
    session = _NoRedirectSession()
    session.trust_env = False
    session.max_redirects = 0
    session.headers = CaseInsensitiveDict(DEFAULT_HEADERS)
    session.cookies.set_policy(_RefuseAllCookies())
    adapter = _GuardedAdapter(guard)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


_sessions: WeakKeyDictionary[AddressGuard, requests.Session] = WeakKeyDictionary()


def session_for(guard: AddressGuard) -> requests.Session:
    """The one requests Session kept for `guard`."""
    session = _sessions.get(guard)
    if session is None:
        session = _sessions[guard] = new_session(guard)
    return session


# ---------------------------------------------------------------- the exchanges

def _mapped(exchange: Callable[..., CallOutcome]) -> Callable[..., CallOutcome]:
    """What these libraries raise, as failure kinds (the transport maps what its own client raises). requests'
    ConnectTimeout is both a ConnectionError and a Timeout, so timeouts are judged first; but urllib3's
    NewConnectionError (refused, or an address denied) is a ConnectTimeoutError too, and is no timeout."""

    def run(*args: Any) -> CallOutcome:
        try:
            return exchange(*args)
        except NewConnectionError as exc:
            return CallOutcome(TRANSPORT_ERROR, detail=f"{type(exc).__name__}: {exc}"[:500])
        except (requests.Timeout, urllib3.exceptions.TimeoutError) as exc:
            return CallOutcome(TIMED_OUT, detail=f"{type(exc).__name__}: {exc}"[:500])
        except (requests.RequestException, urllib3.exceptions.HTTPError, http.client.HTTPException) as exc:
            return CallOutcome(TRANSPORT_ERROR, detail=f"{type(exc).__name__}: {exc}"[:500])

    return run


@_mapped
def exchange_requests(guard: AddressGuard, request: BuiltRequest, authorization: str, deadline: float,
                      cap: int) -> CallOutcome:
    """One call through the guarded requests Session: no redirects, the body streamed."""
    headers = {**request.headers, "Authorization": authorization}
    response = session_for(guard).request(request.method, request.url, headers=headers, data=request.body,
                                          stream=True, allow_redirects=False, timeout=deadline)
    try:
        return judge(response.status_code, response.headers.get("Content-Type"),
                     response.raw.stream(CHUNK_BYTES, decode_content=True), cap)
    finally:
        response.close()


@_mapped
def exchange_urllib3(guard: AddressGuard, request: BuiltRequest, authorization: str, deadline: float,
                     cap: int) -> CallOutcome:
    """One call through urllib3's guarded pools directly: no redirects, no retries, the body streamed."""
    manager = session_for(guard).get_adapter(request.url).poolmanager
    headers = {**DEFAULT_HEADERS, **request.headers, "Authorization": authorization}
    response = manager.urlopen(request.method, request.url, body=request.body, headers=headers, redirect=False,
                               retries=False, preload_content=False, timeout=deadline)
    complete = False
    try:
        outcome = judge(response.status, response.headers.get("Content-Type"),
                        response.stream(CHUNK_BYTES, decode_content=True), cap)
        complete = response.isclosed() or response.length_remaining == 0
        return outcome
    finally:
        if not complete:
            response.close()  # cut off or unread: the connection is not reused
        response.release_conn()


_EXCHANGES = {"geventhttpclient": transport._exchange, "urllib3": exchange_urllib3, "requests": exchange_requests}


def use(engine: str) -> None:
    """Make this process's platform send calls with `engine`."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}")
    transport._exchange = _EXCHANGES[engine]
