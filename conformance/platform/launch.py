"""Starting a platform and a mock backend for the suite, as processes, on free loopback ports.

`toolgate conformance platform` without `--url` checks a platform of its own: a fresh SQLite
database in a temporary directory, one organization, an admin and an agent key, `toolgate serve`
allowed to call loopback (where the mock listens), and `toolgate mock-backend` trusting that
organization's issuer. Everything runs through the `toolgate` command beside the running Python,
as an operator would run it; the kit imports nothing of the service. Both processes are stopped,
and the directory removed, when the context closes.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import gevent
import requests

from conformance.platform.budgets import START_SECONDS
from conformance.runner import CouldNotRun

ORG = "conformance"
LOOPBACK = "127.0.0.1"
#: `toolgate serve` may call these besides public addresses: the mock listens on loopback.
ALLOWED_NETWORKS = "127.0.0.0/8"
MOCK_LISTENING = re.compile(r"listening on (http://\S+)")
#: Attempts at a free port for `toolgate serve`, which must be told its port (and issuer) up front.
SERVE_ATTEMPTS = 3
#: The variable through which a test run lowers `toolgate serve`'s call deadline (never above the spec's).
TEST_CALL_DEADLINE_VARIABLE = "TOOLGATE_TEST_CALL_DEADLINE_SECONDS"
#: How long a stopped process gets to exit before it is killed.
STOP_SECONDS = 10
LOG_TAIL_CHARS = 2_000


@dataclass(frozen=True)
class Started:
    """What the kit started: the platform's URL and keys, and the mock's URL."""

    url: str
    admin_key: str
    agent_key: str
    mock_url: str


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


def free_port() -> int:
    """A port free on loopback right now."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


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


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_answering(url: str, process: subprocess.Popen) -> bool:
    """Poll `url` until it answers 200 (True), the process exits, or the start budget passes."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return True
        except requests.RequestException:
            pass
        gevent.sleep(0.1)
    return False


@contextlib.contextmanager
def _serve(toolgate: str, env: dict[str, str], database: str, workdir: Path,
           public_url: str | None) -> Iterator[str]:
    """`toolgate serve` on a free port, retried if another process takes the port first; its URL.

    The issuer is `{public URL}/orgs/{slug}`, computed when serving, so the organization created
    before the port was known still gets the right one. The public URL is the platform's own
    unless it is reached through something in front of it.
    """
    for attempt in range(SERVE_ATTEMPTS):
        port = free_port()
        url = f"http://{LOOPBACK}:{port}"
        public = public_url or url
        log = workdir / f"serve-{attempt}.log"
        with open(log, "wb") as sink:
            process = subprocess.Popen([toolgate, "serve", "--host", LOOPBACK, "--port", str(port),
                                        "--database", database, "--public-url", public],
                                       env={**env, "TOOLGATE_PUBLIC_URL": public}, stdout=sink,
                                       stderr=subprocess.STDOUT)
        try:
            if _wait_until_answering(f"{url}/orgs/{ORG}/.well-known/jwks.json", process):
                yield url
                return
        finally:
            _stop(process)
        if attempt == SERVE_ATTEMPTS - 1 or "address already in use" not in _tail(log).lower():
            raise CouldNotRun(f"`toolgate serve` did not start on {url}: {_tail(log)}")


def _create_organization(toolgate: str, env: dict[str, str], database: str) -> tuple[str, str]:
    """Migrate the database and create the organization; its (admin key, agent key)."""
    _run([toolgate, "migrate", "--database", database], env, "migrating the database")
    created = json.loads(_run([toolgate, "org", "create", ORG, "--json", "--database", database], env,
                              "creating the organization"))
    agent = json.loads(_run([toolgate, "key", "create", "--org", ORG, "--role", "agent", "--json",
                             "--database", database], env, "creating an agent key"))
    return created["admin_key"], agent["key"]


@contextlib.contextmanager
def mock_backend(issuer: str, toolgate: str | None = None) -> Iterator[str]:
    """`toolgate mock-backend` on a free loopback port, trusting `issuer`; its URL."""
    command = [toolgate or toolgate_command(), "mock-backend", "--host", LOOPBACK, "--port", "0",
               "--issuer", issuer]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = ""
        with gevent.Timeout(START_SECONDS, False):
            line = process.stdout.readline()
        found = MOCK_LISTENING.search(line)
        if found is None:
            raise CouldNotRun(f"the mock backend did not start: {line.strip() or 'no output'}")
        yield found.group(1)
    finally:
        _stop(process)
        process.stdout.close()


@contextlib.contextmanager
def local_platform(public_url: str | None = None, call_deadline_seconds: float | None = None) -> Iterator[Started]:
    """A platform with one organization and a mock backend, started and stopped by the kit.

    `public_url` is where clients reach the platform when that is not its own address (a proxy
    in front of it): the issuer, and so the key set the mock trusts, live there. A
    `call_deadline_seconds` below the spec's is for the kit's own tests only.
    """
    toolgate = toolgate_command()
    workdir = Path(tempfile.mkdtemp(prefix="toolgate-conformance-"))
    database = f"sqlite:///{workdir / 'toolgate.db'}"
    env = {**os.environ, "TOOLGATE_SECRET_KEY": secrets.token_urlsafe(32),
           "TOOLGATE_ALLOWED_NETWORKS": ALLOWED_NETWORKS, "TOOLGATE_DATABASE_URL": database}
    env.pop(TEST_CALL_DEADLINE_VARIABLE, None)
    if call_deadline_seconds is not None:
        env[TEST_CALL_DEADLINE_VARIABLE] = f"{call_deadline_seconds:g}"
    try:
        admin_key, agent_key = _create_organization(toolgate, env, database)
        with _serve(toolgate, env, database, workdir, public_url) as url, \
                mock_backend(f"{public_url or url}/orgs/{ORG}", toolgate) as mock_url:
            yield Started(url, admin_key, agent_key, mock_url)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
