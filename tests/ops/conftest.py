"""Apps on both engines with an organization whose keys of every role are at hand, and definitions to register."""
import pytest

from service import create_app
from service.config import Config
from service.database import db

SECRET = "test-secret-for-ops"
#: Nothing listens here, and the address guard refuses loopback unless allowed: no test traffic leaves.
NOWHERE = "http://127.0.0.1:9"


class Api:
    """A test client that presents one API key on every call."""

    def __init__(self, client, key):
        self.client, self.key = client, key

    def __call__(self, method, path, json=None, key=None, **kwargs):
        headers = {"Authorization": f"Bearer {key or self.key}", **kwargs.pop("headers", {})}
        return self.client.open(path, method=method, json=json, headers=headers, **kwargs)


def tool(name, path="/x", *, method="GET", scope="shared", parameters=(), **extra):
    """A valid definition: a description, a URL on NOWHERE, everything else as given."""
    return {"name": name, "description": f"The {name} tool.", "method": method, "url": NOWHERE + path,
            "scope": scope, "parameters": list(parameters), **extra}


@pytest.fixture
def config(database_url):
    return Config(database_url=database_url, secret_key=SECRET, flask={"TESTING": True})


@pytest.fixture
def app(config):
    return create_app(config)


@pytest.fixture
def client(app):
    return app.test_client()


def make_org(config, slug):
    """An organization with its signing keys and one key of each role."""
    from service.registry import create_api_key, get_organization
    from service.provisioning import create_organization_with_keys

    with db.connection_context():
        admin = create_organization_with_keys(config, slug)
        organization = get_organization(slug)
        return {"admin": admin, "agent": create_api_key(organization, "agent"),
                "backend": create_api_key(organization, "backend")}


@pytest.fixture
def keys(app, config):
    return make_org(config, "acme")


@pytest.fixture
def api(client, keys):
    return Api(client, keys["admin"])


@pytest.fixture
def other_api(client, config):
    return Api(client, make_org(config, "globex")["admin"])
