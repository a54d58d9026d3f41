"""The identity tests' providers: a stub of our own (every header and claim chosen, fetches counted, taken down at
will) and, for the end-to-end tests, a real OpenID provider (oidc-provider under Node), started once per run."""
import pytest

from tests.identity.openid_provider import openid_provider_process
from tests.identity.stub_provider import stub_provider


@pytest.fixture
def provider():
    """A stub provider on loopback, fresh for each test (its fetch counts start at zero)."""
    with stub_provider() as running:
        yield running


@pytest.fixture(scope="session")
def openid_provider():
    """The real OpenID provider, one process for the whole run; skipped, with the reason, where Node is missing."""
    with openid_provider_process() as running:
        yield running
