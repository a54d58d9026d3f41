import pytest

from ..live import live_service, mock_backend
from .client import Person


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """One service per test module (each test names its own tools), on a fresh database."""
    with live_service(tmp_path_factory.mktemp("dashboard")) as running:
        yield running


@pytest.fixture(scope="module")
def backend(service):
    with mock_backend([service.issuer]) as url:
        yield url


@pytest.fixture
def admin(service):
    person = Person(service.url)
    assert person.sign_in(service.admin_key).status == 200
    return person


@pytest.fixture
def agent(service):
    person = Person(service.url)
    assert person.sign_in(service.agent_key).status == 200
    return person
