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
