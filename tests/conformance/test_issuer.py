"""The kit's own issuer: its key set served over HTTP as the platform serves one."""
from __future__ import annotations

import pytest
import requests

from conformance.issuer import JWKS_PATH, KitIssuer
from conformance.runner import CouldNotRun


def test_the_key_set_is_served_at_the_well_known_path():
    with KitIssuer() as issuer:
        assert issuer.url.startswith("http://127.0.0.1:")
        response = requests.get(f"{issuer.url}{JWKS_PATH}", timeout=5)
        missing = requests.get(f"{issuer.url}/keys", timeout=5)
        fetches = issuer.fetches

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Cache-Control"] == "max-age=300"
    assert response.json() == {"keys": [issuer.key.public_jwk()]}
    assert missing.status_code == 404
    assert fetches == 1


def test_a_closed_issuer_no_longer_answers():
    issuer = KitIssuer().start()
    url = issuer.url
    issuer.close()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}{JWKS_PATH}", timeout=2)


def test_a_port_already_taken_means_the_suite_cannot_run():
    with KitIssuer() as first:
        port = int(first.url.rsplit(":", 1)[1])
        with pytest.raises(CouldNotRun, match=f"cannot serve the key set on 127.0.0.1:{port}"):
            KitIssuer(port=port).start()


def test_two_issuers_have_different_keys_and_ports():
    with KitIssuer() as one, KitIssuer() as two:
        assert one.url != two.url
        assert one.key.kid != two.key.kid


def test_a_published_next_key_is_served_beside_the_current_one():
    from conformance.tokens import SigningKey

    with KitIssuer() as issuer:
        next_key = SigningKey.generate()
        issuer.publish(next_key)
        served = requests.get(f"{issuer.url}{JWKS_PATH}", timeout=5).json()
        times = issuer.fetch_times()
    assert [key["kid"] for key in served["keys"]] == [issuer.key.kid, next_key.kid]
    assert len(times) == 1


def test_a_trap_counts_its_own_fetches_and_serves_what_a_follower_wants():
    from cryptography import x509

    with KitIssuer() as issuer:
        jku, x5u, unused = issuer.trap("jku"), issuer.trap("x5u"), issuer.trap("kid")
        keys = requests.get(jku, timeout=5)
        certificate = requests.get(x5u, timeout=5)
        requests.get(x5u, timeout=5)
        unknown = requests.get(f"{issuer.url}/trap/jku/not-a-trap{JWKS_PATH}", timeout=5)
        counts = issuer.fetches_of(jku), issuer.fetches_of(x5u), issuer.fetches_of(unused)
        key_set_fetches = issuer.fetches

    assert jku.startswith(f"{issuer.url}/trap/jku/") and jku.endswith(JWKS_PATH)
    assert x5u.startswith(f"{issuer.url}/trap/x5u/") and x5u.endswith(".pem")
    assert keys.json() == {"keys": [issuer.key.public_jwk()]}
    loaded = x509.load_pem_x509_certificate(certificate.content).public_key()
    assert loaded.public_numbers() == issuer.key.private.public_key().public_numbers()
    assert unknown.status_code == 404
    assert counts == (1, 2, 0)
    assert key_set_fetches == 0  # a trap is not the key set
