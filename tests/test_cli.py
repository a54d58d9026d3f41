"""The `toolgate` command as outside clients use it: a real process, JSON on stdout."""
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from unittest import mock

import click
import gevent
import jwt
import pytest
import requests

from service.cli import cli as cli_group
from service.cli import main as cli_main
from tests.support.databases import migrated_sqlite
from tests.support.loopback import exchange

TOOLGATE = str(Path(sys.executable).with_name("toolgate"))
SECRET = "cli-test-secret"


def toolgate(*args, env=None, check=True):
    result = subprocess.run([TOOLGATE, *args], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "TOOLGATE_SECRET_KEY": SECRET, **(env or {})})
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_migrate_and_org_creation_print_the_contracts_json(tmp_path):
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    assert "applied: 0001_registry" in toolgate("migrate", "--database", database).stdout
    env = {"TOOLGATE_PUBLIC_URL": "https://tools.example.com"}
    created = json.loads(toolgate("org", "create", "acme", "--json", "--database", database, env=env).stdout)
    assert set(created) == {"org", "issuer", "admin_key"}
    assert created["issuer"] == "https://tools.example.com/orgs/acme"
    again = toolgate("org", "create", "acme", "--json", "--database", database, check=False)
    assert again.returncode != 0 and "already exists" in again.stderr


def test_key_creation_prints_the_contracts_json(tmp_path):
    database, admin_key = _migrated_with_org(tmp_path)
    key = json.loads(toolgate("key", "create", "--org", "acme", "--role", "agent", "--json",
                              "--database", database).stdout)
    assert set(key) == {"key", "role"} and key["role"] == "agent" and key["key"] != admin_key


def test_serve_refuses_a_database_whose_schema_is_behind(tmp_path):
    result = toolgate("serve", "--port", "0", "--database", f"sqlite:///{tmp_path / 'empty.db'}", check=False)
    assert result.returncode != 0
    assert "toolgate migrate" in result.stderr


def test_key_create_for_an_unknown_organization_fails_clearly(tmp_path):
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    toolgate("migrate", "--database", database)
    result = toolgate("key", "create", "--org", "nobody", "--role", "admin", "--database", database, check=False)
    assert result.returncode != 0 and "nobody" in result.stderr


# --- A command that cannot run says one sentence and exits 2 (issue 30) ---------------------------------------

def _unreachable_postgres() -> str:
    from tests.support.loopback import free_port

    return f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"


#: Each class of failure a command cannot run through, with what its one line must say: a setting it cannot take
#: or lacks, a database it cannot open, reach, read as a URL or use yet, and an argument click or the service refuses.
CANNOT_RUN = {
    "a setting that is not a number": (("migrate",), {"TOOLGATE_MAX_STEPS_PER_TURN": "eight"},
                                       "TOOLGATE_MAX_STEPS_PER_TURN must be a whole number"),
    "no secret key to seal a signing key": (("org", "create", "newco"), {"TOOLGATE_SECRET_KEY": ""},
                                            "TOOLGATE_SECRET_KEY is not set"),
    "a database file that cannot be opened": (("migrate", "--database", "sqlite:////nonexistent/dir/x.db"), {},
                                              "The database cannot be used: unable to open database file."),
    "a database server that does not answer": (("key", "create", "--org", "acme", "--role", "admin", "--database",
                                                _unreachable_postgres), {}, "The database cannot be used: "),
    "a database URL of no engine": (("audit", "verify", "--database", "mysql://db/x"), {},
                                    "Unsupported database URL 'mysql://db/x'"),
    "a database whose schema is behind": (("calls", "purge", "--database", "EMPTY"), {}, "toolgate migrate"),
    "a missing argument": (("org", "create"), {}, "toolgate org create: Missing argument 'SLUG'."),
    "an unknown command": (("publish",), {}, "toolgate: No such command 'publish'."),
    "a value click refuses": (("key", "create", "--org", "acme", "--role", "root"), {},
                              "toolgate key create: Invalid value for '--role'"),
    "a value the service refuses": (("org", "create", "Not A Slug", "--database", "MIGRATED"), {},
                                    "The slug is invalid."),
    "an organization that does not exist": (("audit", "verify", "--org", "nobody", "--database", "MIGRATED"), {},
                                            "No organization 'nobody'."),
    "a file that cannot be read": (("tools", "import", "/nonexistent.yaml", "--org", "acme", "--database", "MIGRATED"),
                                   {}, "cannot read /nonexistent.yaml"),
}


@pytest.mark.parametrize("case", list(CANNOT_RUN))
def test_a_command_that_cannot_run_says_one_sentence_and_exits_2(case, tmp_path):
    args, env, said = CANNOT_RUN[case]
    migrated = migrated_sqlite(tmp_path / "migrated.db")  # made in this process: `migrate` is tested above
    places = {"EMPTY": f"sqlite:///{tmp_path / 'empty.db'}", "MIGRATED": migrated}
    args = [places.get(a, a) if isinstance(a, str) else a() for a in args]
    result = toolgate(*args, env={"TOOLGATE_DATABASE_URL": migrated, **env}, check=False)
    assert result.returncode == 2, result.stderr
    assert said in result.stderr and result.stderr.startswith("Error: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr


def test_importing_the_service_package_imports_nothing_gevent_must_patch_first():
    """`python -m service.entry` imports `service` before entry's first line patches gevent: a database driver or
    peewee imported there would keep real thread-locals, and every greenlet of a worker would share one connection."""
    probe = ("import sys, service, service.config, service.limits, service.errors\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('peewee', 'playhouse', 'psycopg2', 'gevent', 'requests', 'urllib3', 'flask', 'jwt')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


# --- One CLI: every sub-command is a click command with real help under `toolgate` ---------------------------

def _commands(group, path=()):
    """Every leaf command of the `toolgate` group, with its path of names."""
    context = click.Context(group)
    for name in group.list_commands(context):  # the kit's group builds its commands when asked (get_command)
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


LEAVES = sorted(_commands(cli_group), key=lambda leaf: leaf[0])


@pytest.mark.parametrize("path, command", LEAVES, ids=[" ".join(path) for path, _ in LEAVES])
def test_every_sub_command_has_real_help_under_toolgate(path, command, capsys):
    assert cli_main([*path, "--help"]) == 0
    shown = capsys.readouterr().out
    assert shown.lower().startswith(f"usage: toolgate {' '.join(path)}")
    for option in (p for p in command.params if isinstance(p, click.Option)):
        assert option.help, f"toolgate {' '.join(path)} {option.opts[0]} has no help"
        assert option.opts[-1] in shown


@pytest.mark.parametrize("suite, option", [("platform", "--admin-key"), ("endpoint", "--jwks-port"),
                                           ("list", "--area")])
def test_conformance_sub_commands_are_named_toolgate_conformance(suite, option, capsys):
    assert cli_main(["conformance", suite, "--help"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"Usage: toolgate conformance {suite}") and option in shown


def test_the_console_script_shows_the_mocks_own_options():
    shown = toolgate("mock-backend", "--help").stdout
    assert shown.startswith("Usage: toolgate mock-backend [OPTIONS]")
    assert "--issuer ISS" in shown and "accept-alg-none" in shown and "0 picks a free one" in shown


# --- One serve loop: bound first, the URL with the real port, a clean stop on SIGTERM or SIGINT -------------

#: How long a stopped server may take to exit; past it the test fails.
STOP_BOUND_SECONDS = 20
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:(\d+))")


@contextlib.contextmanager
def started(*args, env=None):
    """`toolgate ARGS` running; yields (process, URL it printed). Always stopped."""
    process = subprocess.Popen([TOOLGATE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TOOLGATE_SECRET_KEY": SECRET, **(env or {})})
    try:
        with gevent.Timeout(60):
            line = process.stdout.readline()
        found = LISTENING.search(line)
        assert found and found.group(2) != "0", line + process.stderr.read() if not found else line
        yield process, found.group(1)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()
        process.stderr.close()


def stopped_by(process, signum) -> int:
    process.send_signal(signum)
    return process.wait(timeout=STOP_BOUND_SECONDS)


def _migrated_with_org(tmp_path) -> tuple[str, str]:
    """A SQLite database made in this process (the `migrate` and `org create` commands are tested above), with
    organization acme; (its URL, acme's admin key)."""
    from service.config import Config
    from service.database import db, open_database
    from service.migrations import migrate
    from service.provisioning import create_organization_with_keys

    url = f"sqlite:///{tmp_path / 'serve.db'}"
    open_database(url)
    with db.connection_context():
        migrate()
        admin_key = create_organization_with_keys(Config(database_url=url, secret_key=SECRET), "acme")
    return url, admin_key


def test_serve_on_port_zero_prints_the_bound_url_and_stops_cleanly_on_sigterm(tmp_path):
    database, admin_key = _migrated_with_org(tmp_path)
    environment = {k: v for k, v in os.environ.items() if k != "TOOLGATE_PUBLIC_URL"}
    with mock.patch.dict(os.environ, environment, clear=True), \
            started("serve", "--port", "0", "--database", database) as (process, url):
        assert requests.get(f"{url}/healthz", timeout=10).status_code == 200
        # The public URL defaults to the URL actually bound, so issuers carry the real port.
        minted = requests.post(f"{url}/v1/session-tokens", json={"subject": "alice"}, timeout=10,
                               headers={"Authorization": f"Bearer {admin_key}"})
        assert minted.status_code == 201, minted.text
        assert jwt.decode(minted.json()["token"], options={"verify_signature": False})["iss"] == f"{url}/orgs/acme"
        # It serves with the service's handler (service/server.py), which reads a head strictly: two different
        # lengths are refused rather than one guessed (request smuggling), and the answer is one write.
        assert exchange(int(url.rsplit(":", 1)[1]), b"POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
                        b"Content-Length: 2\r\n\r\nab").startswith(b"HTTP/1.1 400 ")
        assert stopped_by(process, signal.SIGTERM) == 0


def test_serve_with_workers_listens_on_the_socket_it_bound_first(tmp_path):
    database, _ = _migrated_with_org(tmp_path)
    with started("serve", "--port", "0", "--workers", "1", "--database", database) as (process, url):
        assert requests.get(f"{url}/healthz", timeout=30, headers={"Connection": "close"}).status_code == 200
        assert stopped_by(process, signal.SIGTERM) == 0
        logged = process.stderr.read()
    assert "Handling signal: term" in logged and "Logging error" not in logged  # gunicorn's own lines print whole


def test_gunicorn_workers_hold_clients_to_the_deadlines_and_cap_their_connections(tmp_path):
    """`--workers` serves through the service's own server: gunicorn's left a worker's backlog to fill behind a few
    thousand idle sockets (9,000 took /healthz away from two workers, issue 30)."""
    database, _ = _migrated_with_org(tmp_path)
    env = {"TOOLGATE_MAX_CONNECTIONS": "8", "TOOLGATE_HEAD_TIMEOUT_SECONDS": "1"}
    with started("serve", "--port", "0", "--workers", "2", "--database", database, env=env) as (process, url), \
            contextlib.ExitStack() as stack:
        port = int(url.rsplit(":", 1)[1])
        assert requests.get(f"{url}/healthz", timeout=30).status_code == 200  # a worker has booted
        hostile = [stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10)) for _ in range(40)]
        for sock in hostile:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\n")  # and never the blank line
        for _ in range(5):  # every worker past its cap many times over, and each probe still answered at once
            answered = requests.get(f"{url}/healthz", timeout=2, headers={"Connection": "close"})
            assert answered.status_code == 200 and answered.elapsed.total_seconds() < 1
        closed = b""
        for sock in hostile:  # each gave its place to a newer connection, or was answered 408 at its deadline
            with contextlib.suppress(ConnectionResetError):
                closed += sock.recv(4096) + b"|"
        assert closed.count(b"|") == len(hostile)
        assert b"408 Request Timeout" in closed
        assert stopped_by(process, signal.SIGTERM) == 0


def test_serve_on_a_taken_port_says_so_and_exits_2():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = toolgate("serve", "--port", str(taken.getsockname()[1]), check=False)
    assert result.returncode == 2 and "cannot listen on 127.0.0.1" in result.stderr


@pytest.mark.parametrize("args, signum", [
    (("mock-backend", "--port", "0", "--issuer", "https://iss.example/orgs/a"), signal.SIGTERM),
    (("model-server", "--port", "0"), signal.SIGINT),  # the same loop: Ctrl-C stops it as cleanly
], ids=["mock-backend", "model-server"])
def test_the_mock_servers_on_port_zero_print_the_bound_url_and_stop_cleanly(args, signum):
    with started(*args) as (process, url):
        assert requests.get(f"{url}/_health", timeout=10).status_code == 200
        assert stopped_by(process, signum) == 0


@pytest.mark.parametrize("path, option", [(("serve",), "--port"), (("demo",), "--mock-port"),
                                          (("mock-backend", "--issuer", "https://iss.example"), "--port"),
                                          (("model-server",), "--port")])
def test_a_port_past_65535_is_refused_naming_the_option(path, option, capsys):
    assert cli_main([*path, option, "99999"]) == 2
    err = capsys.readouterr().err
    assert f"Invalid value for '{option}': 99999 is not in the range 0<=x<=65535." in err and err.count("\n") == 1
