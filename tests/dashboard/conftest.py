"""People signed in to the dashboard of the module's service (each dashboard module shares one service)."""
import pytest

from tests.dashboard.client import Person


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
