"""Fixtures for the dispatch tests: real endpoints on 127.0.0.1 and a guard that lets tests reach them."""
from __future__ import annotations

from pathlib import Path

import pytest

from service.dispatch import AddressGuard
from tests.dispatch.certificates import TestAuthority, make_authority
from tests.dispatch.endpoint import Endpoint, gzip_bomb
from tests.support.loopback import free_port


@pytest.fixture(scope="session")
def endpoint():
    """One shared misbehaving endpoint; tests that count connections start their own."""
    server = Endpoint(bomb=gzip_bomb())
    yield server
    server.stop()


@pytest.fixture
def fresh_endpoint():
    server = Endpoint()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def loopback_guard() -> AddressGuard:
    """What an operator's allow-list does for the demo: 127.0.0.0/8 may be reached."""
    return AddressGuard(["127.0.0.0/8"])


@pytest.fixture
def fresh_guard() -> AddressGuard:
    """A guard of its own, and so a connection pool of its own (pools are kept per guard)."""
    return AddressGuard(["127.0.0.0/8"])


@pytest.fixture(scope="session")
def authority(tmp_path_factory) -> TestAuthority:
    return make_authority(Path(tmp_path_factory.mktemp("tls")))


@pytest.fixture
def tls_endpoint(authority):
    """An HTTPS endpoint whose certificate names `localhost`, signed by the test authority."""
    server = Endpoint(ssl_context=authority.server_context("localhost"))
    yield server
    server.stop()


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed)."""
    return free_port()
