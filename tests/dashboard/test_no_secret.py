"""With no TOOLGATE_SECRET_KEY there is nothing to derive the cookie keys from: the dashboard says so."""
import requests

from service import create_app
from service.config import Config
from service.dashboard.web import NO_SECRET
from service.server import make_server
from tests.support.databases import migrated_sqlite
from tests.support.loopback import serving


def test_without_a_secret_no_one_can_sign_in(tmp_path):
    url = migrated_sqlite(tmp_path / "plain.db")
    with serving(create_app(Config(database_url=url, secret_key="", flask={"TESTING": True})), make_server) as base:
        for method, path in (("GET", "/signin"), ("POST", "/signin"), ("GET", "/tools")):
            response = requests.request(method, base + path, timeout=10, allow_redirects=False)
            assert response.status_code == 503
            assert NO_SECRET in response.text
            assert "Set-Cookie" not in response.headers
        assert requests.get(base + "/static/dashboard/dashboard.css", timeout=10).status_code == 200
