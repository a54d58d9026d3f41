"""The `requests` Session of the reference engine (transport.ENGINE = "requests"), and what both engines share.

The call path sends with service.dispatch.client; this Session is what it replaced, kept so that the
benchmarks can run the platform with it side by side. Everything an endpoint could use against the
platform is switched off here, once: environment proxies and .netrc (`trust_env`), cookies (a policy
that refuses to store or return any), redirects (never followed, and never read to be followed), and
turning TLS verification off (the adapter forces it on whatever a caller passes).
"""
from __future__ import annotations

from http.cookiejar import DefaultCookiePolicy
from typing import Any

import requests
import requests.adapters
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict

from service.dispatch.connection import GuardedPoolManager
from service.dispatch.guard import AddressGuard
from service.limits import STEP_POOL_SIZE

#: How many hosts keep a pool of open connections; further hosts evict the least recently used.
HOST_POOLS = 100

#: Sent on every call; the Authorization header is added per call. Only encodings decoded as the
#: body streams are offered, so a compressed body is always measured by what it expands to.
DEFAULT_HEADERS = {"User-Agent": "Toolgate", "Accept": "*/*", "Accept-Encoding": "gzip, deflate"}


def ca_bundle() -> str:
    """The CA bundle TLS verifies against, for every engine: the one requests uses (certifi's).

    Read when a host's pool is made rather than at import, so the whole platform follows one setting.
    """
    return requests.adapters.DEFAULT_CA_BUNDLE_PATH


class _RefuseAllCookies(DefaultCookiePolicy):
    """Cookies are never stored, so none can ever be sent to another endpoint or call."""

    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def return_ok(self, cookie: Any, request: Any) -> bool:
        return False


class _NoRedirectSession(requests.Session):
    def get_redirect_target(self, resp: requests.Response) -> None:
        # With allow_redirects=False, requests still looks for a redirect to offer as `next`, and
        # reads the whole 3xx body to free the connection for it. No target, no read.
        return None


class GuardedAdapter(HTTPAdapter):
    """An HTTPAdapter whose connections check their address, with TLS always verified, no proxy."""

    def __init__(self, guard: AddressGuard, pool_size: int = STEP_POOL_SIZE) -> None:
        self._guard = guard  # set before super().__init__, which builds the pool manager
        super().__init__(pool_connections=HOST_POOLS, pool_maxsize=pool_size, max_retries=0)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        self._pool_connections, self._pool_maxsize, self._pool_block = connections, maxsize, block
        self.poolmanager = GuardedPoolManager(
            self._guard, num_pools=connections, maxsize=maxsize, block=block, **pool_kwargs
        )

    def send(self, request: Any, stream: bool = False, timeout: Any = None, verify: Any = True,
             cert: Any = None, proxies: Any = None) -> requests.Response:
        # No per-call (or per-tool) way to turn verification off, present a client cert or add a proxy.
        return super().send(request, stream=stream, timeout=timeout, verify=True, cert=None, proxies=None)


def new_session(guard: AddressGuard, pool_size: int = STEP_POOL_SIZE) -> requests.Session:
    """A Session whose connections pass `guard`, sized for a step's fan-out."""
    session = _NoRedirectSession()
    session.trust_env = False
    session.max_redirects = 0
    session.headers = CaseInsensitiveDict(DEFAULT_HEADERS)
    session.cookies.set_policy(_RefuseAllCookies())
    adapter = GuardedAdapter(guard, pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
