"""Starting a platform and a mock backend for the suite, as processes, on free loopback ports.

Each is started with `--port 0`: it binds a free port itself and prints the URL it bound, in the
line "… listening on http://HOST:PORT …", which the kit reads. No port is guessed, so none can be
taken by another process between the guess and the bind.

`toolgate conformance platform` without `--url` checks a platform of its own: a fresh SQLite
database in a temporary directory, one organization, an admin and an agent key, `toolgate serve`
allowed to call loopback (where the mock listens) and running turns with the scripted model
(`toolgate model-server`, which the turn cases script), and `toolgate mock-backend`
trusting that organization's issuer. Everything runs as a process, through the `toolgate` command
beside the running Python as an operator would run it; the kit imports nothing of the service or
the mock. Every process is stopped, and the directory removed, when the context closes.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import gevent

from conformance.platform.budgets import START_SECONDS
from conformance.runner import CouldNotRun

ORG = "conformance"
LOOPBACK = "127.0.0.1"
#: `toolgate serve` may call these besides public addresses: the mock listens on loopback.
ALLOWED_NETWORKS = "127.0.0.0/8"
#: The line a `toolgate` server prints once bound, with the URL it listens on.
LISTENING = re.compile(r"listening on (http://\S+)")
#: How often the kit looks at a starting server's output for that line.
POLL_SECONDS = 0.05
#: The model name the platform is configured with; the scripted model answers to any.
SCRIPTED_MODEL = "scripted"
#: The variable through which a test run lowers `toolgate serve`'s call deadline (never above the spec's).
TEST_CALL_DEADLINE_VARIABLE = "TOOLGATE_TEST_CALL_DEADLINE_SECONDS"
#: How long a stopped process gets to exit before it is killed.
STOP_SECONDS = 10
#: The servers the kit starts that keep nothing (the mock backend, the scripted model): killed, not stopped. A
#: stop lets the calls in flight finish, and the platform gives up on one on purpose (the late answer of
#: `failure/timed-out`), so the mock's clean stop waited its grace out at the end of every run.
DISPOSABLE = frozenset({"mock-backend", "model-server"})
LOG_TAIL_CHARS = 2_000


@dataclass(frozen=True)
class Started:
    """What the kit started: the platform's URL and keys, and the mock's URL."""

    url: str
    admin_key: str
    agent_key: str
    mock_url: str
    model_url: str = ""


def toolgate_command() -> str:
    """The `toolgate` console script beside this Python (a virtualenv's bin), else on PATH."""
    beside = Path(sys.executable).with_name("toolgate")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("toolgate")
    if found is None:
        raise CouldNotRun("cannot start a platform: no `toolgate` command beside "
                          f"{sys.executable} or on PATH (or give --url)")
    return found


def _head(path: Path) -> str:
    """The start of a log, where a server's listening line is."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read(LOG_TAIL_CHARS)
    except OSError:
        return ""


def _tail(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL_CHARS:].strip()
    except OSError:
        return ""


def _run(command: list[str], env: dict[str, str], doing: str) -> str:
    """Run one short `toolgate` command; its stdout, or CouldNotRun with its stderr."""
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=START_SECONDS)
    except subprocess.TimeoutExpired as exc:
        raise CouldNotRun(f"{doing}: `{' '.join(command[1:3])}` did not finish in {START_SECONDS:g} s") from exc
    if done.returncode != 0:
        raise CouldNotRun(f"{doing} failed (exit {done.returncode}): {done.stderr.strip()[-LOG_TAIL_CHARS:]}")
    return done.stdout


def _stop_all(processes: list[subprocess.Popen]) -> None:
    """Stop every process at once: each is told to stop before any is waited on, so their shutdowns overlap."""
    for process in processes:
        if process.poll() is None and process.args[1] in DISPOSABLE:
            process.kill()
        elif process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _start(command: list[str], env: dict[str, str], log: Path, what: str) -> tuple[subprocess.Popen, str]:
    """Start a `toolgate` server with `--port 0` among its arguments; the process, and the URL it printed once bound.

    Its output goes to `log` (a file: nothing it writes later can fill a pipe and stall it), which is
    read until the listening line appears, the process exits, or the start budget passes. A server
    that does not start (or whose start is abandoned) is stopped before this returns.
    """
    with open(log, "wb") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        found = None
        with gevent.Timeout(START_SECONDS, False):
            while found is None and process.poll() is None:
                gevent.sleep(POLL_SECONDS)
                found = LISTENING.search(_head(log))
        if found is None or process.poll() is not None:
            state = "exited" if process.poll() is not None else f"said nothing in {START_SECONDS:g} s"
            raise CouldNotRun(f"{what} did not start ({state}): {_tail(log) or 'no output'}")
    except BaseException:
        _stop_all([process])
        raise
    return process, found.group(1)


@contextlib.contextmanager
def _server(command: list[str], env: dict[str, str], log: Path, what: str) -> Iterator[str]:
    """A `toolgate` server (see `_start`) for as long as the context is open; its URL."""
    process, url = _start(command, env, log, what)
    try:
        yield url
    finally:
        _stop_all([process])


def _serve_command(toolgate: str, env: dict[str, str], database: str,
                   public_url: str | None) -> tuple[list[str], dict[str, str]]:
    """`toolgate serve` on a free port: its command line and environment.

    The issuer is `{public URL}/orgs/{slug}`, computed when serving, so the organization created
    before the port was known still gets the right one. The public URL is the platform's own (the
    URL it prints) unless it is reached through something in front of it.
    """
    command = [toolgate, "serve", "--host", LOOPBACK, "--port", "0", "--database", database]
    env = {name: value for name, value in env.items() if name != "TOOLGATE_PUBLIC_URL"}
    if public_url:
        command += ["--public-url", public_url]
    return command, env


def _mock_command(toolgate: str, issuer: str) -> list[str]:
    return [toolgate, "mock-backend", "--host", LOOPBACK, "--port", "0", "--issuer", issuer]


def _model_command(toolgate: str) -> list[str]:
    return [toolgate, "model-server", "--host", LOOPBACK, "--port", "0"]


def _create_organization(toolgate: str, env: dict[str, str], database: str) -> tuple[str, str]:
    """Create the organization in a migrated database; its (admin key, agent key)."""
    created = json.loads(_run([toolgate, "org", "create", ORG, "--json", "--database", database], env,
                              "creating the organization"))
    agent = json.loads(_run([toolgate, "key", "create", "--org", ORG, "--role", "agent", "--json",
                             "--database", database], env, "creating an agent key"))
    return created["admin_key"], agent["key"]


@contextlib.contextmanager
def _alone(command: list[str], what: str, prefix: str) -> Iterator[str]:
    """One server in a temporary directory of its own (for its log), as the kit's user starts it; its URL."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        with _server(command, dict(os.environ), workdir / "server.log", what) as url:
            yield url
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def mock_backend(issuer: str, toolgate: str | None = None) -> contextlib.AbstractContextManager[str]:
    """`toolgate mock-backend` on a free loopback port, trusting `issuer`; its URL."""
    return _alone(_mock_command(toolgate or toolgate_command(), issuer), "the mock backend",
                  "toolgate-conformance-mock-")


def model_server(toolgate: str | None = None) -> contextlib.AbstractContextManager[str]:
    """`toolgate model-server`, the scripted model, on a free loopback port; its URL."""
    return _alone(_model_command(toolgate or toolgate_command()), "the scripted model", "toolgate-conformance-model-")


class _Concurrently:
    """The greenlets of one start-up. A result is awaited where it is needed and a failure raised there: a
    greenlet's own uncaught exception would also be printed by gevent's hub, as a crash. `kill` ends any still
    running (a start abandoned stops its process, a command its child)."""

    def __init__(self) -> None:
        self._greenlets: list[gevent.Greenlet] = []

    def spawn(self, function: Callable[..., Any], *args: Any) -> gevent.Greenlet:
        """Run `function(*args)` in a greenlet of its own."""
        def outcome() -> tuple[bool, Any]:
            try:
                return True, function(*args)
            except Exception as failure:  # raised again by `result`, in the greenlet that needs the value
                return False, failure
        greenlet = gevent.spawn(outcome)
        self._greenlets.append(greenlet)
        return greenlet

    @staticmethod
    def result(greenlet: gevent.Greenlet) -> Any:
        """What the greenlet's function returned, once it has; what it raised is raised here."""
        succeeded, value = greenlet.get()
        if not succeeded:
            raise value
        return value

    def kill(self) -> None:
        """End every greenlet still running."""
        gevent.killall(self._greenlets)


@contextlib.contextmanager
def local_platform(public_url: str | None = None, model_via: str | None = None,
                   call_deadline_seconds: float | None = None) -> Iterator[Started]:
    """A platform with one organization, a mock backend and a scripted model, started and stopped by the kit.

    `public_url` is where clients reach the platform when that is not its own address (a proxy
    in front of it): the issuer, and so the key set the mock trusts, live there. `model_via` is
    where the platform reaches the model when that is not the model server itself (a proxy again). A
    `call_deadline_seconds` below the spec's is for the kit's own tests only.

    What does not wait on another starts at once, each in a greenlet of its own: the model server, the
    migration and, when the public URL is known beforehand, the mock; then the organization and the
    platform, which need the schema (the platform, the model's URL too); then the mock, if the platform's
    URL names its issuer. Starting one after another cost seconds more. Everything stops at once too.
    """
    toolgate = toolgate_command()
    workdir = Path(tempfile.mkdtemp(prefix="toolgate-conformance-"))
    database = f"sqlite:///{workdir / 'toolgate.db'}"
    env = {**os.environ, "TOOLGATE_SECRET_KEY": secrets.token_urlsafe(32),
           "TOOLGATE_ALLOWED_NETWORKS": ALLOWED_NETWORKS, "TOOLGATE_DATABASE_URL": database}
    env.pop(TEST_CALL_DEADLINE_VARIABLE, None)
    if call_deadline_seconds is not None:
        env[TEST_CALL_DEADLINE_VARIABLE] = f"{call_deadline_seconds:g}"
    processes: list[subprocess.Popen] = []
    started = _Concurrently()

    def start(command: list[str], environment: dict[str, str], log: str, what: str) -> str:
        process, url = _start(command, environment, workdir / log, what)
        processes.append(process)
        return url

    def mock(issuer_base: str) -> str:
        return start(_mock_command(toolgate, f"{issuer_base}/orgs/{ORG}"), dict(os.environ), "mock.log",
                     "the mock backend")

    try:
        model = started.spawn(start, _model_command(toolgate), dict(os.environ), "model.log", "the scripted model")
        migrated = started.spawn(_run, [toolgate, "migrate", "--database", database], env, "migrating the database")
        early_mock = started.spawn(mock, public_url) if public_url else None
        started.result(migrated)
        model_url = started.result(model)
        keys = started.spawn(_create_organization, toolgate, env, database)
        command, serving = _serve_command(toolgate, {
            **env, "TOOLGATE_MODEL_PROVIDER": "openai", "TOOLGATE_MODEL_BASE_URL": f"{model_via or model_url}/v1",
            "TOOLGATE_MODEL": SCRIPTED_MODEL, "TOOLGATE_MODEL_API_KEY": ""}, database, public_url)
        url = start(command, serving, "serve.log", "`toolgate serve`")
        mock_url = started.result(early_mock) if early_mock is not None else mock(url)  # a greenlet is false once done
        admin_key, agent_key = started.result(keys)
        yield Started(url, admin_key, agent_key, mock_url, model_url)
    finally:
        started.kill()
        _stop_all(processes)
        shutil.rmtree(workdir, ignore_errors=True)
