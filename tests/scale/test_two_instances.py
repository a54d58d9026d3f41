"""Two real `toolgate serve` processes on one PostgreSQL schema, as behind a load balancer.

Instance A is the single gevent process, instance B runs gunicorn's gevent workers (`--workers 2`); they
share the database, the sealing secret and the public URL (the issuer every token names), and nothing
else. A conversation opened on one continues on the other, and publishes racing on both produce one
version, with the losers told 409, never a 500.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import gevent
import gevent.pool
import pytest
import requests

from tests.support.constants import POSTGRES_URL
from tests.support.databases import fresh_postgres_schema
from tests.support.head_starts import head_start
from tests.support.live import mock_backend
from tests.support.loopback import free_port

pytestmark = pytest.mark.skipif(not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")

ROOT = Path(__file__).resolve().parents[2]
SECRET = "two-instances-test-secret-for-sealing-keys"
START_SECONDS = 30
RACERS_PER_INSTANCE = 4


def _toolgate(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "service.entry", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _wait_until_up(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, "toolgate serve exited while starting"
        try:
            if requests.get(url + "/openapi.json", timeout=2).status_code == 200:
                return
        except requests.RequestException:  # refused, or (bound first, app still building) not yet answered
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not come up")


@head_start("instances")
def started_instances():
    """(A's URL, B's URL, admin key, backend key), on a fresh PostgreSQL schema of their own (`toolgate migrate`
    migrates it) dropped afterwards; both processes are stopped afterwards. Seconds of processes starting, begun ahead
    (tests.support.head_starts.head_start)."""
    if not POSTGRES_URL:  # the module's tests skip
        yield None
        return
    with fresh_postgres_schema(POSTGRES_URL, migrated=False) as schema_url:
        yield from _instances(schema_url)


def _instances(schema_url: str):
    ports = [free_port(), free_port()]
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    env = {**os.environ, "TOOLGATE_DATABASE_URL": schema_url, "TOOLGATE_SECRET_KEY": SECRET,
           "TOOLGATE_PUBLIC_URL": urls[0], "TOOLGATE_ALLOWED_NETWORKS": "127.0.0.0/8"}
    env.pop("TOOLGATE_WORKERS", None)
    _toolgate("migrate", env=env)
    keys = gevent.spawn(_keys, env)  # while both instances start
    processes = []
    try:
        for port, extra in zip(ports, ([], ["--workers", "2"])):
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "service.entry", "serve", "--host", "127.0.0.1", "--port", str(port), *extra],
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for url, process in zip(urls, processes):
            _wait_until_up(url, process)
        yield urls[0], urls[1], *keys.get()
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _keys(env: dict[str, str]) -> tuple[str, str]:
    """The organization `scale`: its admin key and a backend key."""
    admin_key = json.loads(_toolgate("org", "create", "scale", "--json", env=env))["admin_key"]
    backend_key = json.loads(_toolgate("key", "create", "--org", "scale", "--role", "backend", "--json",
                                       env=env))["key"]
    return admin_key, backend_key


@pytest.fixture(scope="module")
def instances(head_starts):
    """(A's URL, B's URL, admin key, backend key)."""
    return head_starts["instances"].get()


def call(method: str, url: str, key: str, **kwargs) -> requests.Response:
    return requests.request(method, url, headers={"Authorization": f"Bearer {key}"}, timeout=30, **kwargs)


def register(url: str, admin: str, name: str, target: str, **extra) -> None:
    response = call("POST", f"{url}/v1/tools", admin, json={
        "name": name, "description": f"The {name} tool.", "method": "GET", "url": target, "scope": "per_user",
        "parameters": [{"name": "subject", "type": "string", "location": "query"}], **extra})
    assert response.status_code == 201, response.text


def race(requests_to_make) -> list[requests.Response]:
    """Fire every (method, url, key) at once; their responses in the same order."""
    pool = gevent.pool.Pool(len(requests_to_make))
    return pool.map(lambda r: call(*r), requests_to_make)


def test_a_conversation_opened_on_one_instance_continues_on_the_other(instances):
    a, b, admin, backend = instances
    with mock_backend([f"{a}/orgs/scale"]) as mock:
        register(a, admin, "whoami", f"{mock}/tools/whoami/echo")
        register(b, admin, "greeting", f"{mock}/tools/greeting/echo", runs_at_session_start=True)
        assert call("POST", f"{b}/v1/projects", admin, json={"name": "shop"}).status_code == 201
        pins = [{"tool": "whoami", "version": "draft"}, {"tool": "greeting", "version": "draft"}]
        assert call("PUT", f"{a}/v1/projects/shop/draft", admin, json={"pins": pins}).status_code == 200
        assert call("POST", f"{b}/v1/projects/shop/publish", admin).status_code == 201
        token = call("POST", f"{b}/v1/session-tokens", backend, json={"subject": "alice"}).json()["token"]

        opened = call("POST", f"{a}/v1/conversations", token, json={"project": "shop"})
        assert opened.status_code == 201, opened.text
        conversation = opened.json()
        assert json.loads(conversation["context"][0]["output"])["claims"]["aud"] == "greeting"

        seen_on_b = call("GET", f"{b}/v1/conversations/{conversation['id']}", token)
        assert seen_on_b.status_code == 200 and seen_on_b.json()["context"] == conversation["context"]
        turn = call("POST", f"{b}/v1/conversations/{conversation['id']}/turns", token).json()["turn"]
        step = call("POST", f"{a}/v1/conversations/{conversation['id']}/turns/{turn}/steps", token,
                    json={"calls": [{"id": "1", "name": "whoami", "arguments": {}}]})
        assert step.status_code == 200, step.text
        claims = json.loads(step.json()["results"][0]["output"])["claims"]
        assert (claims["sub"], claims["aud"], claims["turn"]) == ("alice", "whoami", turn)

        someone_else = call("POST", f"{a}/v1/session-tokens", backend, json={"subject": "mallory"}).json()["token"]
        assert call("GET", f"{b}/v1/conversations/{conversation['id']}", someone_else).status_code == 404


def test_concurrent_tool_publishes_on_both_instances_make_one_version(instances):
    a, b, admin, _backend = instances
    register(a, admin, "raced_tool", "https://api.example.com/orders")
    responses = race([("POST", f"{url}/v1/tools/raced_tool/publish", admin)
                      for url in (a, b) * RACERS_PER_INSTANCE])
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [409] * (2 * RACERS_PER_INSTANCE - 1), [r.text for r in responses]
    assert [r.json()["version"] for r in responses if r.status_code == 201] == [1]
    for url in (a, b):
        versions = call("GET", f"{url}/v1/tools/raced_tool", admin).json()["versions"]
        assert [v["version"] for v in versions] == [1]


def test_concurrent_project_publishes_on_both_instances_make_one_version(instances):
    a, b, admin, _backend = instances
    register(b, admin, "pinned_tool", "https://api.example.com/stock")
    assert call("POST", f"{a}/v1/projects", admin, json={"name": "raced"}).status_code == 201
    pins = [{"tool": "pinned_tool", "version": "draft"}]
    assert call("PUT", f"{b}/v1/projects/raced/draft", admin, json={"pins": pins}).status_code == 200
    responses = race([("POST", f"{url}/v1/projects/raced/publish", admin) for url in (a, b) * RACERS_PER_INSTANCE])
    statuses = [r.status_code for r in responses]
    assert statuses.count(201) == 1, [r.text for r in responses]
    # A loser that reads after the winner committed finds no draft left: 409, or 422 when the pinned
    # tool's draft is what it checks first. Never a 500, never a second version.
    assert set(statuses) - {201} <= {409, 422}, [r.text for r in responses]
    project = call("GET", f"{a}/v1/projects/raced", admin).json()
    assert len(project["versions"]) == 1
    tool = call("GET", f"{b}/v1/tools/pinned_tool", admin).json()
    assert len(tool["versions"]) == 1 and tool["draft"] is None
