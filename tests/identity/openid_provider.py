"""A real OpenID provider for the end-to-end tests: oidc-provider (the npm package) run with Node, started once per
run (tests/identity/provider/server.mjs). It issues RFC 9068 JWT access tokens by the client-credentials grant with
a resource indicator, so no browser is needed: the token's `aud` is the resource asked for, `scope` the scopes asked
for, and `person` the person a test names (the subject claim the tests configure).
"""
from __future__ import annotations

import contextlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import gevent
import pytest
import requests

HERE = Path(__file__).resolve().parent / "provider"
ENSURE = HERE.parent / "ensure_provider.sh"
CLIENT = ("shop-assistant", "shop-assistant-secret")
#: How long the provider may take to install (first run only) and to start.
INSTALL_SECONDS, START_SECONDS = 240, 30


@dataclass
class OpenIdProvider:
    """The running provider: its issuer, and tokens from its token endpoint."""

    issuer: str

    def token(self, resource: str, person: str = "alice", scope: str = "orders:read", alg: str = "RS256") -> str:
        """An access token for `resource` (its audience) standing for `person`, by the client-credentials grant."""
        response = requests.post(f"{self.issuer}/token", auth=CLIENT, timeout=10, data={
            "grant_type": "client_credentials", "resource": resource, "scope": scope, "person": person, "alg": alg})
        assert response.status_code == 200, response.text
        return response.json()["access_token"]


def _installed() -> str | None:
    """Why the provider cannot run here, or None when it can (installing it first if need be)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "Node and npm are not installed, so the real OpenID provider (oidc-provider) cannot run"
    if not (HERE / "node_modules" / "oidc-provider").is_dir():
        done = subprocess.run(["sh", str(ENSURE)], capture_output=True, text=True, timeout=INSTALL_SECONDS)
        if done.returncode != 0:
            return f"oidc-provider could not be installed: {done.stderr.strip()[-300:]}"
    return None


@contextlib.contextmanager
def openid_provider_process() -> Iterator[OpenIdProvider]:
    """Start the provider on a free loopback port; skip the test, saying why, where it cannot run."""
    reason = _installed()
    if reason is not None:
        pytest.skip(reason)
    process = subprocess.Popen(["node", "server.mjs", "--port", "0"], cwd=HERE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        with gevent.Timeout(START_SECONDS):
            line = process.stdout.readline()
        if " listening on " not in line:
            pytest.fail(f"the OpenID provider did not start: {line!r}")
        yield OpenIdProvider(issuer=line.rsplit(" listening on ", 1)[1].strip())
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


class ProjectMcpSession:
    """A raw Streamable HTTP session with a project's MCP server (`/mcp/projects/{project}?org=…`), `token` as the
    Bearer: enough JSON-RPC to show a provider's token is a person's session there too."""

    def __init__(self, service, token: str, project: str, org: str = "acme") -> None:
        import requests

        self.url = f"{service.url}/mcp/projects/{project}?org={org}"
        self.http = requests.Session()
        self.http.trust_env = False
        self.http.headers.update({"Authorization": f"Bearer {token}",
                                  "Accept": "application/json, text/event-stream"})
        self.opened = self.http.post(self.url, timeout=30, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "toolgate-identity-test", "version": "1"}}})
        session_id = self.opened.headers.get("Mcp-Session-Id")
        if session_id:
            self.http.headers.update({"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-06-18"})
            self.http.post(self.url, timeout=30, json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    def request(self, method: str, params: dict) -> dict:
        """The result of one JSON-RPC request; the test fails on an error."""
        answer = self.http.post(self.url, timeout=30, json={"jsonrpc": "2.0", "id": 2, "method": method,
                                                             "params": params})
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]
