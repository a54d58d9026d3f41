"""The fixtures every area shares, each defined once; what they are built on is in tests/support/, by concern.

An area's own conftest holds only fixtures no other area uses (the dispatch tests' endpoints, the mock's key
server, the broken platform doubles).
"""

# gevent must patch before anything imports socket, ssl or threading (STYLE: first line of each
# process entry point). pytest is the entry point of the test process, and this file is the
# first of ours it imports.
from gevent import monkey

monkey.patch_all()

from psycogreen.gevent import patch_psycopg  # noqa: E402

patch_psycopg()  # PostgreSQL waits cooperate with gevent, as in `service.entry`

import pytest  # noqa: E402

from service.config import Config  # noqa: E402
from tests.dashboard.client import Person  # noqa: E402
from tests.support.constants import POSTGRES_URL, SECRET  # noqa: E402
from tests.support.databases import app_for, drop_spare_schemas, fresh_postgres_schema, migrated_sqlite  # noqa: E402
from tests.support.definitions import Api, make_org  # noqa: E402
from tests.support.head_starts import HeadStarts  # noqa: E402
from tests.support.live import live_service, mock_backend, stop_idle_servers  # noqa: E402

ENGINES = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(
        not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")),
]


def pytest_configure(config):
    config.addinivalue_line("markers", "service(per_module=False, **settings): how the `service` fixture runs: "
                            "one service for the whole module, and Config fields (a body bound, a call deadline)")
    config.addinivalue_line("markers", "last: run after every other test (it reads what a head start ran beside "
                            "them, see tests.support.head_starts.head_start)")


def pytest_collection_modifyitems(items):
    """The tests marked `last` move to the end of the run, in their order."""
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)


@pytest.fixture(scope="session", autouse=True)
def _live_servers():
    """The servers `live_service` keeps for the next test are stopped when the run ends, and the PostgreSQL schemas
    kept for the next test dropped."""
    yield
    stop_idle_servers()
    if POSTGRES_URL:
        drop_spare_schemas()


@pytest.fixture(scope="session", autouse=True)
def head_starts(request):
    """The head starts (tests.support.head_starts.head_start) of the fixtures the selected tests use, by fixture; stopped when the
    run ends."""
    started = HeadStarts(request.session.items)
    yield started
    started.close()


@pytest.fixture(autouse=True)
def _head_starts_due(request, head_starts):
    """Begin the head starts due by this test."""
    head_starts.begin_due(request.node)


# ---- in-process apps on both engines ---------------------------------------------------------------------------

@pytest.fixture(params=ENGINES)
def database_url(request, tmp_path):
    """A fresh, migrated database on each engine: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield migrated_sqlite(tmp_path / "toolgate.db")
        return
    with fresh_postgres_schema(POSTGRES_URL) as url:
        yield url


@pytest.fixture
def config(database_url):
    return Config(database_url=database_url, secret_key=SECRET, flask={"TESTING": True})


@pytest.fixture
def app(config):
    return app_for(config)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def keys(app, config):
    """The API keys of organization `acme`, by role."""
    return make_org(config, "acme")


@pytest.fixture
def api(client, keys):
    """The test client as acme's admin."""
    return Api(client, keys["admin"])


@pytest.fixture
def other_api(client, config):
    """The test client as the admin of another organization, globex."""
    return Api(client, make_org(config, "globex")["admin"])


# ---- a live service and the mock backend ------------------------------------------------------------------------

def _service_marker(request) -> tuple[bool, dict]:
    marker = request.node.get_closest_marker("service")
    settings = dict(marker.kwargs) if marker else {}
    return bool(settings.pop("per_module", False)), settings


@pytest.fixture(scope="module")
def module_service(request, tmp_path_factory):
    """The one service of a module marked `pytest.mark.service(per_module=True)` (see `service`); a module-scoped
    fixture of such a module asks for this one by name."""
    _, settings = _service_marker(request)
    with live_service(tmp_path_factory.mktemp("service"), **settings) as running:
        yield running


@pytest.fixture
def service(request, tmp_path):
    """A live service on a fresh database, with organization acme and a key of each role.

    A module whose tests each name their own tools may share one, `pytestmark = pytest.mark.service(per_module=True)`;
    the marker's other arguments are Config fields.
    """
    per_module, settings = _service_marker(request)
    if per_module:
        yield request.getfixturevalue("module_service")
        return
    with live_service(tmp_path, **settings) as running:
        yield running


@pytest.fixture(scope="module")
def module_backend(module_service):
    """The mock backend of a module's one service (see `backend`)."""
    with mock_backend([module_service.issuer]) as url:
        yield url


@pytest.fixture
def backend(request, service):
    """The mock backend, trusting the service's issuer; its base URL. The module's one, if the service is."""
    if _service_marker(request)[0]:
        yield request.getfixturevalue("module_backend")
        return
    with mock_backend([service.issuer]) as url:
        yield url


# ---- people signed in to the dashboard ---------------------------------------------------------------------------

@pytest.fixture
def admin(service):
    """A person signed in to the service's dashboard with its admin key."""
    person = Person(service.url)
    assert person.sign_in(service.admin_key).status == 200
    return person


@pytest.fixture
def agent(service):
    """A person signed in to the service's dashboard with its agent key."""
    person = Person(service.url)
    assert person.sign_in(service.agent_key).status == 200
    return person
