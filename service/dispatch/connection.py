"""Connections that check the address they actually connect to.

urllib3 would resolve a hostname and connect to whatever it gets. Here each new connection resolves
the host itself, once, through gevent's resolver and within its own budget, checks every candidate
address with the AddressGuard and connects only to allowed ones. The check and the connect use the
same resolved address, so a hostname that answers differently a moment later (DNS rebinding) cannot
slip an internal address in between. TLS still verifies the certificate against the hostname from
the URL, because urllib3 wraps the socket returned here using the connection's `host`.
"""
from __future__ import annotations

import socket
import sys
from typing import Any

import gevent
import gevent.socket
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.poolmanager import PoolManager
from urllib3.util.timeout import _DEFAULT_TIMEOUT

from service.dispatch.guard import AddressGuard
from service.limits import DNS_BUDGET_SECONDS


class AddressDenied(NewConnectionError):
    """Every address the host resolved to is one the guard refuses."""


def resolve(host: str, port: int) -> list[tuple[Any, ...]]:
    """getaddrinfo through gevent's resolver, given at most DNS_BUDGET_SECONDS.

    A name server that never answers would otherwise hold the call until the whole deadline, so it
    fails here as a resolution error (a transport error) instead.
    """
    budget = gevent.Timeout(DNS_BUDGET_SECONDS)
    budget.start()
    try:
        return gevent.socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    except gevent.Timeout as exc:
        if exc is not budget:
            raise
        raise socket.gaierror(socket.EAI_AGAIN, f"no answer within {DNS_BUDGET_SECONDS} s") from None
    finally:
        budget.close()


class _GuardedConnectionMixin:
    """Replaces urllib3's `_new_conn`: resolve once, check each address, connect to an allowed one."""

    # Provided by urllib3's HTTPConnection, which this is mixed into.
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
            candidates = resolve(self._dns_host, self.port)
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


class GuardedHTTPConnection(_GuardedConnectionMixin, HTTPConnection):
    pass


class GuardedHTTPSConnection(_GuardedConnectionMixin, HTTPSConnection):
    pass


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class GuardedPoolManager(PoolManager):
    """A PoolManager whose every connection carries the guard.

    The guard is added when a pool is made rather than through `connection_pool_kw`, because every
    key there must also be a field of urllib3's pool key.
    """

    def __init__(self, guard: AddressGuard, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.guard = guard
        self.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}

    def _new_pool(
        self, scheme: str, host: str, port: int, request_context: dict[str, Any] | None = None
    ) -> HTTPConnectionPool:
        context = dict(self.connection_pool_kw if request_context is None else request_context)
        context["guard"] = self.guard
        return super()._new_pool(scheme, host, port, context)
