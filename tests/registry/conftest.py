import pytest

from service import create_app
from service.config import Config


class Api:
    """A test client that presents one API key on every call."""

    def __init__(self, client, key):
        self.client = client
        self.key = key

    def __call__(self, method, path, json=None, headers=None, key=None):
        headers = {"Authorization": f"Bearer {key or self.key}", **(headers or {})}
        return self.client.open(path, method=method, json=json, headers=headers)


@pytest.fixture
def app(database_url):
    return create_app(Config(database_url=database_url, secret_key="test-secret", flask={"TESTING": True}))


@pytest.fixture
def client(app):
    return app.test_client()


def make_org(app, slug):
    from service.database import db
    from service.registry import create_api_key, create_organization

    with db.connection_context():
        organization = create_organization(slug)
        return {role: create_api_key(organization, role) for role in ("admin", "agent", "backend")}


@pytest.fixture
def keys(app):
    return make_org(app, "acme")


@pytest.fixture
def api(client, keys):
    return Api(client, keys["admin"])


@pytest.fixture
def other_api(app, client):
    return Api(client, make_org(app, "globex")["admin"])


@pytest.fixture
def signing(app, keys):
    """acme's signing keys, which minting a session token needs."""
    from service.database import db
    from service.keys.store import create_key_set
    from service.registry import get_organization

    with app.app_context(), db.connection_context():
        create_key_set(get_organization("acme"), "test-secret")
