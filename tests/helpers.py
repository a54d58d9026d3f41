"""What tests of every area share, each defined once (fixtures built on these live in tests/conftest.py).

Loopback ports and servers; head starts for what takes seconds to start; a real service (and the mock backend) in
this process under gevent; definitions to register and a conversation driven over the API; an organization with its
keys; the spec's text. Everything listens on 127.0.0.1 only and is stopped when its context closes.
"""
from __future__ import annotations

import atexit
import contextlib
import io
import json
import logging
import os
import secrets
import shutil
import socket
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import quote

import gevent
import gevent.event
import pytest
import requests
from flask import Flask
from gevent.pywsgi import WSGIServer

from service import create_app
from service.config import Config
from service.database import db, make_database, open_database
from service.migrations import check_current, migrate
from service.server import ARRIVAL_KEY, make_server

REPO = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"
SECRET = "test-secret-key-for-sealing-private-keys"
#: Nothing listens here, and the address guard refuses loopback unless allowed: no test traffic leaves.
NOWHERE = "http://127.0.0.1:9"
SUBJECT_IN_PATH = {"name": "subject", "type": "string", "location": "path"}
#: A PostgreSQL server the storage, registry and load tests also run on, when set (CI sets it).
POSTGRES_URL = os.environ.get("TOOLGATE_TEST_POSTGRES_URL", "")


# ---- loopback ------------------------------------------------------------------------------------------------

def free_port() -> int:
    """A loopback port free right now, bound then closed: nothing listens there until someone takes it."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(app: Callable, make: Callable | None = None) -> Iterator[str]:
    """Serve a WSGI app on a free loopback port (on `make(app, host, 0)`'s server if given); yield its base URL."""
    server = make(app, LOOPBACK, 0) if make else WSGIServer((LOOPBACK, 0), app, log=None, error_log=None)
    server.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_port}"
    finally:
        server.stop(timeout=1)


def exchange(port: int, raw: bytes) -> bytes:
    """Send `raw` bytes to a loopback port on a fresh connection and read until the server closes it or goes quiet."""
    with socket.create_connection((LOOPBACK, port), timeout=5) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        with contextlib.suppress(socket.timeout):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    return b"".join(chunks)


def wait_for(condition: Callable[[], object], seconds: float = 5.0) -> None:
    """Return as soon as `condition()` holds, checking every hundredth of a second; gevent.Timeout after `seconds`.
    For waiting on a thing that happens (a call has arrived), never on a guess of how long it takes."""
    with gevent.Timeout(seconds):
        while not condition():
            gevent.sleep(0.01)


# ---- head starts --------------------------------------------------------------------------------------------

#: Contexts that take seconds to enter (processes to start, a run to finish), by the fixture that hands out what they
#: yield, and whether they begin at the run's first test; see `head_start`.
HEAD_STARTS: dict[str, tuple[Callable[[], contextlib.AbstractContextManager], bool]] = {}
#: The longest a fixture waits for its head start: far above any start, so a hang fails rather than stalls.
HEAD_START_WAIT_SECONDS = 300
#: The fewest tests a head start begins ahead of the folder that needs it: tests/scale's three took half a second, and
#: the demo, begun with them, started beside the command line's tests and slowed them.
HEAD_START_FOLDER_TESTS = 10


def head_start(fixture: str, *, at_first_test: bool = False) -> Callable:
    """Register a generator function, written as for `contextlib.contextmanager`, as the head start of the fixture
    named `fixture`. When a selected test uses that fixture, the run enters the context in a greenlet of its own
    while the folder of tests before that test's folder runs (or from its first test, `at_first_test`), and holds it
    open until the run ends (`HeadStarts`): what it starts then starts beside those tests, rather than in the setup of
    the first test that needs it. The fixture takes what it yields with `head_starts[fixture].get()`."""
    def register(function: Callable) -> Callable:
        HEAD_STARTS[fixture] = (contextlib.contextmanager(function), at_first_test)
        return function
    return register


class HeadStart:
    """One head start's context, entered in a greenlet of its own once begun, and held open until `close`."""

    def __init__(self, enter: Callable[[], contextlib.AbstractContextManager]) -> None:
        self._enter = enter
        self._entered: gevent.event.AsyncResult = gevent.event.AsyncResult()
        self._release = gevent.event.Event()
        self._greenlet: gevent.Greenlet | None = None

    def begin(self) -> None:
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._hold)

    def _hold(self) -> None:
        try:
            with self._enter() as value:
                self._entered.set(value)
                self._release.wait()
        except BaseException as failure:  # a failed start is raised by `get`, in the test that needs it
            if self._entered.ready():
                raise
            self._entered.set_exception(failure)

    def get(self) -> Any:
        """What the context yielded, once it has (begun now if it was not); what it raised entering, raised here."""
        self.begin()
        return self._entered.get(timeout=HEAD_START_WAIT_SECONDS)

    def close(self) -> None:
        """Leave the context (stop what it started), or abandon its start; what it raised leaving is raised here."""
        if self._greenlet is None:
            return
        if not self._entered.ready():
            self._greenlet.kill()  # a start abandoned stops what it started, as any failed start does
        self._release.set()
        self._greenlet.get()


class HeadStarts(dict):
    """The head starts of the fixtures a run's tests use, by fixture, each begun when the run reaches its test.

    A head start begins with the first test of the folder before the folder whose test first needs it (or further
    back, past a folder of a few tests): that folder's tests give it their time. All at the run's first test, they
    crowded its busiest minute (the kit's platforms), and slowed the tests there more than they saved."""

    def __init__(self, items: list[pytest.Item]) -> None:
        first_use: dict[str, int] = {}
        for index, item in enumerate(items):
            for name in item.fixturenames:
                if name in HEAD_STARTS:
                    first_use.setdefault(name, index)
        super().__init__((name, HeadStart(HEAD_STARTS[name][0])) for name in first_use)
        folders = [item.path.parent for item in items]
        self._index = {item.nodeid: index for index, item in enumerate(items)}
        self._due = sorted((0 if HEAD_STARTS[name][1] else _folder_before(folders, index), name)
                           for name, index in first_use.items())

    def begin_due(self, item: pytest.Item) -> None:
        """Begin every head start due by `item`."""
        index = self._index.get(item.nodeid, 0)
        while self._due and self._due[0][0] <= index:
            self[self._due.pop(0)[1]].begin()

    def close(self) -> None:
        """Close every head start at once (their processes stop side by side)."""
        gevent.joinall([gevent.spawn(head_start.close) for head_start in self.values()], raise_error=True)


def _folder_before(folders: list[Path], index: int) -> int:
    """The index of the first test of the nearest folder run before the one holding test `index` that begins at least
    `HEAD_START_FOLDER_TESTS` tests before it (0 when none does)."""
    start = index
    while start > 0 and folders[start - 1] == folders[index]:
        start -= 1
    before = start
    while before > 0 and (before == start or start - before < HEAD_START_FOLDER_TESTS):
        before -= 1
        while before > 0 and folders[before - 1] == folders[before]:
            before -= 1
    return before


# ---- definitions and organizations ---------------------------------------------------------------------------

def tool(name: str, url: str = "/x", *, method: str = "GET", scope: str = "shared", parameters=(), **extra) -> dict:
    """A valid definition: a description, `url` (a path is taken on NOWHERE), everything else as given."""
    return {"name": name, "description": f"The {name} tool.", "method": method,
            "url": NOWHERE + url if url.startswith("/") else url, "scope": scope, "parameters": list(parameters),
            **extra}


def gathering_tool(name: str, backend: str, group: str, count: int, wait: float | None = None, **extra) -> dict:
    """A tool on the mock backend whose call answers once `count` calls of `group` are there at the same time, with
    `{"met": true, ...}` (mock_backend.gathering): calls seen to run at once, where timing slow ones cost a second.
    A call left alone answers `met: false` after `wait` seconds (the mock's default when None)."""
    query = "" if wait is None else f"?wait={wait:g}"
    return tool(name, f"{backend}/tools/{name}/together/{group}/{count}{query}", **extra)


def gathered(result: dict) -> tuple[bool, int]:
    """(met, most present) from a gathering tool's result, as the model was handed it."""
    answer = json.loads(result["output"])
    return answer["met"], answer["most_present"]


def make_org(config: Config, slug: str) -> dict[str, str]:
    """An organization with its signing keys and one API key of each role, by role."""
    from service.provisioning import create_organization_with_keys
    from service.registry import create_api_key, get_organization

    with db.connection_context():
        admin = create_organization_with_keys(config, slug)
        organization = get_organization(slug)
        return {"admin": admin, "agent": create_api_key(organization, "agent"),
                "backend": create_api_key(organization, "backend")}


def key_id(key: str) -> str:
    """The public half of an API key (`tgk_<key id>_<secret>`), as records name it."""
    return key.split("_")[1]


class Api:
    """A Flask test client that presents one API key on every call."""

    def __init__(self, client, key: str) -> None:
        self.client, self.key = client, key

    def __call__(self, method: str, path: str, json=None, key: str | None = None, **kwargs):
        headers = {"Authorization": f"Bearer {key or self.key}", **(kwargs.pop("headers", None) or {})}
        return self.client.open(path, method=method, json=json, headers=headers, **kwargs)


#: Apps built so far, by every setting but the database; see `app_for`.
_apps: dict[str, Flask] = {}


def app_for(config: Config) -> Flask:
    """`create_app(config)`, built once per set of settings other than the database and given `config`'s database
    each time after, as create_app gives it: bound afresh (caches of rows key on the binding, so nothing of another
    test's database is seen) and refused if its schema is behind.

    Building an app takes a fifth of a second (its routes and OpenAPI document), and the tests want a few hundred;
    binding a database to one takes next to nothing."""
    key = repr(replace(config, database_url=""))
    app = _apps.get(key)
    if app is None:
        app = _apps[key] = create_app(config)
        return app
    previous = db.obj
    database = open_database(config.database_url, pool_size=config.database_pool_size,
                             pool_wait_seconds=config.database_pool_wait_seconds,
                             timeout_seconds=config.database_timeout_seconds)
    with database.connection_context():
        check_current(database)
    app.extensions["toolgate_config"] = config
    if previous is not None and previous is not database:
        with contextlib.suppress(Exception):  # the last test's database may be gone, or broken on purpose
            previous.close_all() if hasattr(previous, "close_all") else previous.close()
    return app


#: A migrated SQLite database this process copies for each test that wants one (a copy costs a tenth of a migration).
_sqlite_template: list[Path] = []


def migrated_sqlite(path: Path) -> str:
    """The URL of a fresh, migrated SQLite database at `path`: a copy of one migrated once per process."""
    if not _sqlite_template:
        folder = Path(tempfile.mkdtemp(prefix="toolgate-template-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        template = folder / "migrated.db"
        database = make_database(f"sqlite:///{template}", pooled=False)
        with database.connection_context():
            migrate(database)
        # The last connection closed: SQLite has checkpointed the write-ahead log into the file, which is now whole.
        _sqlite_template.append(template)
    shutil.copyfile(_sqlite_template[0], path)
    return f"sqlite:///{path}"


#: Migrated schemas a finished test gave back, emptied, by server URL: the next test takes one instead of migrating
#: a new one (a tenth of a second each, a third of the PostgreSQL runs' setup). Dropped at the end of the run.
_spare_schemas: dict[str, list[str]] = {}
#: What a freshly migrated schema is made of (columns, constraints, indexes, triggers, functions), as one digest:
#: a schema a test changed (a dropped trigger, a deleted migration record) differs, and is dropped, not reused.
_SCHEMA_DIGEST_SQL = """
SELECT md5(string_agg(part, '|' ORDER BY part)) FROM (
  SELECT concat_ws(':', 'relation', relname, relkind) FROM pg_class WHERE relnamespace = current_schema()::regnamespace
  UNION ALL SELECT concat_ws(':', 'column', c.relname, a.attname, a.atttypid, a.attnotnull)
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT concat_ws(':', 'trigger', t.tgname, c.relname, t.tgenabled)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal
  UNION ALL SELECT concat_ws(':', 'function', proname, md5(prosrc))
    FROM pg_proc WHERE pronamespace = current_schema()::regnamespace
  UNION ALL SELECT concat_ws(':', 'migration', number, name) FROM schema_migration
) AS parts(part)"""
#: Emptying a reused schema: every row deleted with the triggers off (the audit trail refuses deletes; the foreign
#: keys' order does not matter then) and every sequence back at its start, faster than TRUNCATE's new files.
_EMPTY_SQL = """
SET LOCAL session_replication_role = replica;
{deletes}
SELECT setval(oid, 1, false) FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'S';"""
#: A fresh migration's digest and the script that empties such a schema, by server URL (the tables are the digest's).
_migrated: dict[str, tuple[str, str]] = {}


@contextlib.contextmanager
def fresh_postgres_schema(server_url: str, migrated: bool = True) -> Iterator[str]:
    """A schema of its own on the PostgreSQL server at `server_url` (migrated unless told not), with no rows; yields
    its URL. Its connections do not wait for the server to flush each commit to disk: a test's database need not
    outlive a crash, and waiting cost the PostgreSQL runs a tenth of their time. A migrated schema is emptied and
    kept for the next test if its schema is still current; any other is dropped."""
    admin = make_database(server_url, pooled=False)
    spare = _spare_schemas.setdefault(server_url, [])
    if migrated and spare:
        schema = spare.pop()
    else:
        schema = f"toolgate_test_{secrets.token_hex(6)}"
        with admin.connection_context():
            admin.execute_sql(f"CREATE SCHEMA {schema}")
        if migrated:
            database = make_database(_in_schema(server_url, schema), pooled=False)
            with database.connection_context():
                migrate(database)
                if server_url not in _migrated:
                    deletes = " ".join(f"DELETE FROM {t};" for t in database.get_tables() if t != "schema_migration")
                    _migrated[server_url] = (database.execute_sql(_SCHEMA_DIGEST_SQL).fetchone()[0],
                                             _EMPTY_SQL.format(deletes=deletes))
    try:
        yield _in_schema(server_url, schema)
    finally:
        if db.obj is not None and not db.obj.is_closed():
            if hasattr(db.obj, "close_all"):
                db.obj.close_all()
            else:
                db.obj.close()
        if not (migrated and _emptied(server_url, schema)):
            with admin.connection_context():
                admin.execute_sql(f"DROP SCHEMA {schema} CASCADE")
        else:
            spare.append(schema)


def _in_schema(server_url: str, schema: str) -> str:
    separator = "&" if "?" in server_url else "?"
    return f"{server_url}{separator}options={quote(f'-csearch_path={schema} -csynchronous_commit=off')}"


def _emptied(server_url: str, schema: str) -> bool:
    """Empty every table of a test's schema but the migrations' record, if the schema is still as migrated; whether
    it was (a test may have changed the schema, or left a lock that a second cannot wait out)."""
    from peewee import DatabaseError

    database = make_database(_in_schema(server_url, schema), pooled=False)
    try:
        with database.connection_context():
            digest, emptying = _migrated[server_url]
            if database.execute_sql(_SCHEMA_DIGEST_SQL).fetchone()[0] != digest:
                return False
            with database.atomic():
                database.execute_sql("SET LOCAL lock_timeout = '1s'")
                database.execute_sql(emptying)
        return True
    except DatabaseError:
        return False


def drop_spare_schemas() -> None:
    """Drop every schema kept for reuse (the end of a run)."""
    for server_url, schemas in _spare_schemas.items():
        admin = make_database(server_url, pooled=False)
        with admin.connection_context():
            for schema in schemas:
                admin.execute_sql(f"DROP SCHEMA {schema} CASCADE")
        schemas.clear()


# ---- a live service ------------------------------------------------------------------------------------------

@dataclass
class LiveService:
    """A running service with one organization and a key of each role."""

    url: str
    config: Config
    org: str
    admin_key: str
    agent_key: str
    backend_key: str

    @property
    def issuer(self) -> str:
        return self.config.issuer(self.org)

    def api(self, method: str, path: str, key: str | None = None, **kwargs) -> requests.Response:
        """Call the service with an API key (admin by default)."""
        headers = {"Authorization": f"Bearer {key or self.admin_key}", **kwargs.pop("headers", {})}
        return requests.request(method, self.url + path, headers=headers, **{"timeout": 30, **kwargs})

    def session_token(self, subject: str = "alice", entitlements=(), anonymous: bool = False, ttl: int = 600) -> str:
        response = self.api("POST", "/v1/session-tokens", self.backend_key, json={
            "subject": subject, "entitlements": list(entitlements), "anonymous": anonymous, "ttl_seconds": ttl})
        assert response.status_code == 201, response.text
        return response.json()["token"]

    def session_token_minted_at(self, issued_at: float, subject: str = "alice", ttl: int = 600) -> str:
        """A session token as this service would have minted it at `issued_at`: the domain takes its clock as a
        parameter, so a test of expiry needs no wait."""
        from service.keys import mint_session_token
        from service.keys.store import signing_key
        from service.registry import get_organization

        with db.connection_context():
            key = signing_key(get_organization(self.org), self.config.secret_key)
        return mint_session_token(key, self.issuer, subject, False, (), ttl, issued_at)[0]

    def as_session(self, method: str, path: str, token: str, **kwargs) -> requests.Response:
        """Call the service with a session token as the Bearer."""
        return requests.request(method, self.url + path, headers={"Authorization": f"Bearer {token}"},
                                **{"timeout": 60, **kwargs})


#: Servers on loopback not serving a test right now, by their settings; see `service_server`.
_idle_servers: dict[str, list[WSGIServer]] = {}


@contextlib.contextmanager
def service_server(database_url: str, allowed_networks=("127.0.0.0/8",), **settings) -> Iterator[Config]:
    """The service on `database_url`, served on a loopback port; yields its Config (`public_url` is the server's).
    `settings` are further Config fields (a pool size, a shorter call deadline, a model).

    The server and its app outlive the context (`app_for`): the next test with the same settings gets them back,
    on a database of its own. `stop_idle_servers` stops them at the end of the run."""
    idle = _idle_servers.setdefault(repr((tuple(allowed_networks), sorted(settings.items()))), [])
    server = idle.pop() if idle else make_server(None, LOOPBACK, 0)
    if not server.started:
        server.init_socket()
    config = Config(database_url=database_url, public_url=f"http://{LOOPBACK}:{server.server_port}",
                    secret_key=SECRET, allowed_networks=tuple(allowed_networks), flask={"TESTING": True}, **settings)
    server.application = app_for(config)
    server.arrival = server.application.extensions[ARRIVAL_KEY]  # the deadlines and cap of these settings
    if not server.started:
        server.start()
    try:
        yield config
    finally:
        idle.append(server)


@contextlib.contextmanager
def live_service(tmp_path: Path, database_url: str | None = None, org: str = "acme",
                 allowed_networks=("127.0.0.0/8",), **settings) -> Iterator[LiveService]:
    """The service (`service_server`) on a fresh database, SQLite in tmp_path unless given, with organization `org`
    and an API key of each role."""
    url = database_url or migrated_sqlite(tmp_path / "live.db")
    with service_server(url, allowed_networks, **settings) as config:
        keys = make_org(config, org)
        yield LiveService(url=config.public_url, config=config, org=org, admin_key=keys["admin"],
                          agent_key=keys["agent"], backend_key=keys["backend"])


def stop_idle_servers() -> None:
    """Stop every server `service_server` kept (the end of a run)."""
    for servers in _idle_servers.values():
        while servers:
            servers.pop().stop(timeout=1)


#: How long a stopping in-process mock backend lets the requests it is still serving finish.
MOCK_STOP_SECONDS = 0.1


@contextlib.contextmanager
def mock_backend(issuers, broken: str | None = None) -> Iterator[str]:
    """The mock backend in this process on a free loopback port; yields its base URL."""
    from mock_backend import create_app as create_mock
    from mock_backend.server import make_server as make_mock_server

    server = make_mock_server(create_mock(list(issuers), broken=broken), LOOPBACK, 0, log=None)
    worker = gevent.spawn(server.serve_forever)
    try:
        yield f"http://{LOOPBACK}:{server.server_port}"
    finally:
        # The test is over: a call the mock is still holding (a slow or dripping one) is cut, not waited for.
        server.stop(timeout=MOCK_STOP_SECONDS)
        worker.kill()


def publish_project(service: LiveService, tools, project: str = "shop") -> int:
    """Register every tool, pin all their drafts into `project` and publish it; returns the version number."""
    if service.api("GET", f"/v1/projects/{project}").status_code == 404:
        assert service.api("POST", "/v1/projects", json={"name": project}).status_code == 201
    for definition in tools:
        response = service.api("POST", "/v1/tools", json=definition)
        assert response.status_code == 201, response.text
    pins = [{"tool": t["name"], "version": "draft"} for t in tools]
    response = service.api("PUT", f"/v1/projects/{project}/draft", json={"pins": pins})
    assert response.status_code == 200, response.text
    response = service.api("POST", f"/v1/projects/{project}/publish")
    assert response.status_code == 201, response.text
    return response.json()["version"]


class Conversation:
    """A conversation driven over the API with one session token."""

    def __init__(self, service: LiveService, token: str, project: str = "shop", version: int | None = None):
        self.service, self.token = service, token
        body = {"project": project} if version is None else {"project": project, "version": version}
        response = service.as_session("POST", "/v1/conversations", token, json=body)
        assert response.status_code == 201, response.text
        self.opened = response.json()
        self.id = self.opened["id"]

    def turn(self) -> str:
        response = self.service.as_session("POST", f"/v1/conversations/{self.id}/turns", self.token)
        assert response.status_code == 201, response.text
        return response.json()["turn"]

    def step_response(self, turn: str, *calls) -> requests.Response:
        """The step's HTTP response, whatever its status; `calls` are (name, arguments) pairs."""
        body = {"calls": [{"id": str(i), "name": name, "arguments": arguments}
                          for i, (name, arguments) in enumerate(calls)]}
        return self.service.as_session("POST", f"/v1/conversations/{self.id}/turns/{turn}/steps", self.token,
                                       json=body)

    def step(self, turn: str, *calls) -> list[dict]:
        """The results of a step that must succeed."""
        response = self.step_response(turn, *calls)
        assert response.status_code == 200, response.text
        return response.json()["results"]

    def tools(self, token: str | None = None) -> list[dict]:
        response = self.service.as_session("GET", f"/v1/conversations/{self.id}/tools", token or self.token)
        assert response.status_code == 200, response.text
        return response.json()["tools"]


def converse(service: LiveService, token: str, *calls, project: str = "shop"):
    """Open a conversation on `project`, start a turn, run one step of `calls` ((name, arguments) pairs).

    Returns the conversation id, the turn id and the step's HTTP response (asserted 200)."""
    conversation = Conversation(service, token, project)
    turn = conversation.turn()
    step = conversation.step_response(turn, *calls)
    assert step.status_code == 200, step.text
    return conversation.id, turn, step


@contextlib.contextmanager
def captured_logs() -> Iterator[io.StringIO]:
    """Every line the service's loggers write meanwhile, formatted as in production; yields the buffer."""
    from service.records.logs import ROOT_LOGGER, JsonFormatter

    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger(ROOT_LOGGER)
    logger.addHandler(handler)
    try:
        yield buffer
    finally:
        logger.removeHandler(handler)


def log_lines(buffer: io.StringIO) -> list[dict]:
    """The JSON lines `captured_logs` caught."""
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


# ---- the spec's text -----------------------------------------------------------------------------------------

#: Where the spec may be: named in TOOLGATE_SPEC_ROOT, carried by the checkout, or `shared/` beside it (as here).
SPEC_ROOTS = [Path(p) for p in [os.environ.get("TOOLGATE_SPEC_ROOT", "")] if p] + \
    [REPO, REPO / "docs", REPO.parent / "shared"]
SPEC_FILES = ("spec/defining-a-tool.txt", "spec/how-tools-run.txt", "THREATS.md")
#: What Toolgate promises beyond the spec, in documents of its own: the kit's cases quote them as they quote the spec,
#: and its traceability map covers every sentence of them too.
PROMISE_FILES = ("docs/approvals.md",)


def spec_root() -> Path:
    """The folder holding `spec/` (and THREATS.md). Without it a test skips; under CI (`CI` set) it fails, so the
    tests that hold our words to the spec's cannot pass unseen."""
    for root in SPEC_ROOTS:
        if all((root / name).is_file() for name in SPEC_FILES):
            return root
    message = f"the spec's text is not in any of {', '.join(map(str, SPEC_ROOTS))} (set TOOLGATE_SPEC_ROOT)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def requirement_text(name: str) -> str:
    """The text of a file the kit's cases quote: one of the spec's (under `spec_root`) or one of Toolgate's own."""
    root = REPO if name in PROMISE_FILES else spec_root()
    return (root / name).read_text(encoding="utf-8")
