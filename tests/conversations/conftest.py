import pytest

from ..live import live_service, mock_backend


@pytest.fixture
def service(tmp_path):
    with live_service(tmp_path) as running:
        yield running


@pytest.fixture
def backend(service):
    with mock_backend([service.issuer]) as url:
        yield url
