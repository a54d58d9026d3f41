"""The JWKS cache: lifetime, one refetch per cooldown, a size cap, and surviving a dead key server."""
from __future__ import annotations

import gevent
import pytest

from mock_backend.jwks import (
    MAX_JWKS_BYTES,
    IssuerKeys,
    JwksUnavailable,
    fetch_jwks,
    jwks_url,
    parse_jwks,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingFetcher:
    """Serves whatever `document` is (or raises when it is an exception), counting fetches."""

    def __init__(self, document) -> None:
        self.document = document
        self.urls: list[str] = []

    def __call__(self, url: str):
        self.urls.append(url)
        if isinstance(self.document, Exception):
            raise self.document
        return self.document


@pytest.fixture
def clock():
    return Clock()


def test_unknown_kid_refetches_once_then_rejects(org_keys, clock):
    es = org_keys["ES256"]
    fetcher = CountingFetcher({"keys": [es.jwk()]})
    cache = IssuerKeys("https://iss.example", fetcher, lifetime=300, cooldown=10, clock=clock)
    assert cache.get(es.kid).alg == "ES256"
    clock.now += 11
    assert cache.get("rotated-2") is None  # one refetch...
    assert cache.get("rotated-2") is None  # ...and not another within the cooldown
    assert fetcher.urls == ["https://iss.example/.well-known/jwks.json"] * 2
    clock.now += 11
    cache.get("rotated-2")
    assert len(fetcher.urls) == 3


def test_rotated_key_is_found_by_the_refetch(org_keys, clock):
    es, ed = org_keys["ES256"], org_keys["EdDSA"]
    fetcher = CountingFetcher({"keys": [es.jwk()]})
    cache = IssuerKeys("https://iss.example", fetcher, clock=clock)
    cache.get(es.kid)
    fetcher.document = {"keys": [es.jwk(), ed.jwk()]}  # the next key is published before it signs
    clock.now += 11
    assert cache.get(ed.kid).alg == "EdDSA"


def test_cached_keys_are_reused_within_the_lifetime(org_keys, clock):
    es = org_keys["ES256"]
    fetcher = CountingFetcher({"keys": [es.jwk()]})
    cache = IssuerKeys("https://iss.example", fetcher, lifetime=300, clock=clock)
    for _ in range(5):
        clock.now += 50
        assert cache.get(es.kid) is not None
    assert len(fetcher.urls) == 1
    clock.now += 100  # 300 s after the first fetch: past the lifetime, fetched again
    cache.get(es.kid)
    assert len(fetcher.urls) == 2


def test_stale_keys_keep_verifying_when_the_key_server_fails(org_keys, clock):
    es = org_keys["ES256"]
    fetcher = CountingFetcher({"keys": [es.jwk()]})
    cache = IssuerKeys("https://iss.example", fetcher, lifetime=300, cooldown=10, clock=clock)
    cache.get(es.kid)
    fetcher.document = JwksUnavailable("key server down")
    clock.now += 1000
    assert cache.get(es.kid) is not None
    assert cache.get(es.kid) is not None
    assert len(fetcher.urls) == 2  # the failed attempt also starts a cooldown


def test_unusable_keys_are_skipped(org_keys):
    es, rs = org_keys["ES256"], org_keys["RS256"]
    document = {"keys": [
        es.jwk(),
        {**rs.jwk(), "kid": "no-alg", "alg": None},
        {**rs.jwk(), "kid": "hmac", "alg": "HS256"},
        {**rs.jwk(), "kid": "mislabelled", "alg": "ES256"},  # an RSA key claiming ES256
        {**es.jwk(), "kid": "for-encryption", "use": "enc"},
        {**es.jwk(), "kid": None},
        "not a key",
    ]}
    assert list(parse_jwks(document)) == [es.kid]


@pytest.mark.parametrize("document", [[], {"keys": "none"}, "text"])
def test_a_document_without_a_keys_list_is_refused(document):
    with pytest.raises(JwksUnavailable):
        parse_jwks(document)


def test_fetch_reads_a_real_jwks(harness):
    document = fetch_jwks(jwks_url(harness.issuer))
    assert {key["kid"] for key in document["keys"]} == {"es256-1", "eddsa-1", "rs256-1"}


def test_oversized_jwks_is_refused(harness, key_server):
    key_server.publish_raw(harness.issuer, b'{"keys": [' + b" " * MAX_JWKS_BYTES + b"]}")
    with pytest.raises(JwksUnavailable, match="larger than"):
        fetch_jwks(jwks_url(harness.issuer))


@pytest.mark.parametrize("status", [404, 503])
def test_fetch_refuses_an_error_status(harness, key_server, status):
    key_server.status = status
    with pytest.raises(JwksUnavailable, match=f"HTTP {status}"):
        fetch_jwks(jwks_url(harness.issuer))


def test_verifying_continues_when_the_key_server_goes_down(harness, live, http):
    url = f"{live}/users/alice/orders"
    assert http.get(url, headers=harness.bearer()).status_code == 200
    harness.key_server.status = 503
    assert http.get(url, headers=harness.bearer()).status_code == 200
    harness.key_server.stop()  # and now nothing listens at all
    assert http.get(url, headers=harness.bearer(alg="EdDSA")).status_code == 200
    assert harness.key_server.hits == 1


def test_oversized_jwks_leaves_no_keys(harness, key_server, mock_client):
    key_server.publish_raw(harness.issuer, b'{"keys": [' + b" " * MAX_JWKS_BYTES + b"]}")
    response = mock_client.get("/users/alice/orders", headers=harness.bearer())
    assert response.get_json() == {"error": "invalid_token", "reason": "unknown-key"}


def test_parallel_calls_on_a_cold_cache_share_one_fetch(harness, live, http):
    def call():
        return http.get(f"{live}/users/alice/orders", headers=harness.bearer()).status_code

    greenlets = [gevent.spawn(call) for _ in range(20)]
    gevent.joinall(greenlets, raise_error=True)
    assert [greenlet.value for greenlet in greenlets] == [200] * 20
    assert harness.key_server.hits == 1
