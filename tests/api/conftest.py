import pytest

from service import create_app
from service.config import Config

from ..registry.conftest import Api


@pytest.fixture
def app(database_url):
    return create_app(Config(database_url=database_url, secret_key="test-secret", flask={"TESTING": True}))


@pytest.fixture
def keys(app):
    """An organization made whole (its signing keys too, so session tokens can be minted) and a key of each role."""
    from service.database import db
    from service.registry import create_api_key, get_organization
    from service.provisioning import create_organization_with_keys

    with db.connection_context():
        admin = create_organization_with_keys(app.extensions["toolgate_config"], "acme")
        organization = get_organization("acme")
        return {"admin": admin, "agent": create_api_key(organization, "agent"),
                "backend": create_api_key(organization, "backend")}


@pytest.fixture
def api(app, keys):
    return Api(app.test_client(), keys["admin"])
