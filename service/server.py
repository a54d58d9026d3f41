"""The service's process under gevent: sized for thousands of waiting steps, served by the one serve loop.

The loop itself (bind first, print the bound URL, TCP_NODELAY, the listen backlog, a clean stop on SIGTERM)
lives in the top-level `serving` package, which the mock backend shares without importing the service.
"""
from __future__ import annotations

import resource

from serving import Server
from serving import make_server as _make_server

#: Threads gevent may use for blocking name lookups. Its default of 10 lets ten lookups that never answer
#: stall every other call's resolution; each lookup already has its own budget inside the call deadline.
RESOLVER_THREADS = 128


def tune_hub() -> None:
    """Size this process for thousands of waiting steps: gevent's thread pool (used for DNS) for a whole step of
    lookups at once, and open files for a socket per waiting request and one per call."""
    import gevent

    pool = gevent.get_hub().threadpool
    if pool.maxsize < RESOLVER_THREADS:
        pool.maxsize = RESOLVER_THREADS
    raise_open_files()


#: Open files the process asks for: every waiting step holds its client's socket and its calls' sockets. The soft
#: limit is often 1,024, which a few hundred waiting steps exhaust; the hard limit, set by the operator, still bounds.
OPEN_FILES = 65_536


def raise_open_files(want: int = OPEN_FILES) -> None:
    """Raise this process's soft RLIMIT_NOFILE towards `want`, within the hard limit (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def make_server(app, host: str, port: int) -> Server:
    """A server for `app`, bound now but not yet serving (port 0 picks a free one: read `server.server_port`)."""
    return _make_server(app, host, port)
