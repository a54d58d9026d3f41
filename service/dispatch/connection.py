"""Resolving a tool's host: once per new connection, within its own budget.

Each new connection (service.dispatch.client) resolves the host itself, through gevent's resolver,
checks every candidate address with the AddressGuard and connects only to an allowed one. The check
and the connect use the same resolved address, so a hostname that answers differently a moment later
(DNS rebinding) cannot slip an internal address in between.
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Any

import gevent
import gevent.socket

from service.limits import DNS_BUDGET_SECONDS


def resolve(host: str, port: int) -> list[tuple[Any, ...]]:
    """getaddrinfo through gevent's resolver, given at most DNS_BUDGET_SECONDS.

    A name server that never answers would otherwise hold the call until the whole deadline, so it
    fails here as a resolution error (a transport error) instead. An address written out is its own
    answer: no lookup, which gevent runs on a thread (a burst of new connections to one host paid one
    each; bench/load.py).
    """
    if "%" not in host:  # an IPv6 scope ("fe80::1%eth0") is left to getaddrinfo, which knows the interfaces
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            if address.version == 4:
                return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port))]
            return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port, 0, 0))]
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
