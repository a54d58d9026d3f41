"""`make run`: the service on SQLite with a demo organization whose tools call the mock backend.

Everything it makes is kept between runs: the secret that seals private keys and the demo's API keys live in
`.toolgate/` (API keys are shown once and only their hashes are stored, so the demo keeps its own copy), the
database in `toolgate.db`. Running it again reuses them.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

from service.config import Config

DEMO_ORG = "demo"
DEMO_PROJECT = "shop"
SUBJECT = {"name": "subject", "type": "string", "location": "path"}


def demo_tools(mock: str) -> list[dict]:
    """The demo shop's tools, pointing at the mock backend's routes of the same names."""
    return [
        {"name": "get_profile", "display_name": "Customer profile", "scope": "per_user",
         "description": "The signed-in customer's name, loyalty tier and dietary notes.", "method": "GET",
         "url": f"{mock}/users/{{subject}}/profile", "runs_at_session_start": True, "parameters": [SUBJECT]},
        {"name": "get_orders", "display_name": "Customer orders", "scope": "per_user",
         "description": "The signed-in customer's recent orders, optionally only open or shipped ones.",
         "method": "GET", "url": f"{mock}/users/{{subject}}/orders", "parameters": [
             SUBJECT, {"name": "status", "type": "string", "location": "query", "required": False,
                       "description": "open or shipped"}]},
        {"name": "get_order", "display_name": "One order", "scope": "per_user",
         "description": "One of the signed-in customer's orders by its id, such as o-1001.", "method": "GET",
         "url": f"{mock}/users/{{subject}}/orders/{{order_id}}", "parameters": [
             SUBJECT, {"name": "order_id", "type": "string", "location": "path"}]},
        {"name": "search_products", "display_name": "Product search", "scope": "shared",
         "description": "Products whose name matches a search term, optionally under a maximum price.",
         "method": "GET", "url": f"{mock}/products", "parameters": [
             {"name": "q", "type": "string", "location": "query", "description": "search term"},
             {"name": "max_price", "type": "number", "location": "query", "required": False}]},
        {"name": "add_to_cart", "display_name": "Add to cart", "scope": "per_user",
         "description": "Adds products to the signed-in customer's cart by their ids; returns the cart.",
         "method": "POST", "url": f"{mock}/users/{{subject}}/cart", "required_entitlement": "cart:write",
         "parameters": [SUBJECT, {"name": "product_ids", "type": "array", "element_type": "string",
                                  "location": "body"}]},
    ]


def _secret(state: Path) -> str:
    path = state / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(32))
        path.chmod(0o600)
    return path.read_text().strip()


def prepare(config: Config, state: Path, mock: str) -> dict:
    """Create (once) the demo organization, its keys and its published project; return the demo's API keys."""
    from service.database import db, open_database
    from service.migrations import migrate
    from service.provisioning import create_organization_with_keys
    from service.registry import (
        create_api_key,
        create_project,
        get_organization,
        publish_project,
        register_tool,
        save_project_draft,
    )

    keys_file = state / "demo.json"
    open_database(config.database_url)
    with db.connection_context():
        migrate()
        organization = get_organization(DEMO_ORG)
        if organization is not None and keys_file.exists():
            return json.loads(keys_file.read_text())
        if organization is not None:
            raise SystemExit(f"The database has a '{DEMO_ORG}' organization but {keys_file} is gone: "
                             "remove toolgate.db to start the demo afresh.")
        admin = create_organization_with_keys(config, DEMO_ORG)
        organization = get_organization(DEMO_ORG)
        assert organization is not None  # created just above
        keys = {"admin": admin, "agent": create_api_key(organization, "agent", "demo agent"),
                "backend": create_api_key(organization, "backend", "demo backend")}
        actor = "person:admin:demo-setup"
        create_project(organization, DEMO_PROJECT, actor)
        for definition in demo_tools(mock):
            register_tool(organization, definition, actor)
        save_project_draft(organization, DEMO_PROJECT,
                           [{"tool": t["name"], "version": "draft"} for t in demo_tools(mock)], actor)
        publish_project(organization, DEMO_PROJECT, actor)
    keys_file.write_text(json.dumps(keys, indent=1))
    keys_file.chmod(0o600)
    return keys


def banner(base: str, mock: str, keys: dict, issuer: str, model: str) -> str:
    return f"""
Toolgate is running.
  dashboard        {base}/            (sign in with the admin key)
  API reference    {base}/api          OpenAPI: {base}/openapi.json
  issuer / JWKS    {issuer}/.well-known/jwks.json
  mock backend     {mock}              (the demo shop; it verifies every signed call)
  model            {model}
  admin key        {keys['admin']}
  agent key        {keys['agent']}
  backend key      {keys['backend']}

Try it:
  TOKEN=$(curl -s -X POST {base}/v1/session-tokens -H "Authorization: Bearer {keys['backend']}" \\
      -H 'Content-Type: application/json' -d '{{"subject": "alice"}}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
  curl -s -X POST {base}/v1/conversations -H "Authorization: Bearer $TOKEN" \\
      -H 'Content-Type: application/json' -d '{{"project": "{DEMO_PROJECT}"}}'
  curl -s -X POST {base}/v1/conversations/<id>/messages -H "Authorization: Bearer $TOKEN" \\
      -H 'Content-Type: application/json' -d '{{"text": "Where are my orders?"}}'
State: toolgate.db and .toolgate/ (delete both to start afresh). Stop with Ctrl-C.
"""


#: How long the demo waits for the mock backend and the scripted model to say where they listen.
CHILD_START_SECONDS = 30
LISTENING = re.compile(r"listening on (http://\S+)")


class DemoCannotStart(Exception):
    """A part of the demo did not start; its own message is already on stderr."""


def _start_child(args: list[str]) -> subprocess.Popen:
    """`toolgate ARGS` as a child process: its stderr is ours, its stdout a pipe to read its URL from."""
    return subprocess.Popen([sys.executable, "-m", "service.entry", *args], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _printed_url(child: subprocess.Popen) -> str | None:
    """The URL a child printed once bound; None when it exited or kept silent. After that first line its stdout
    is copied to ours, so the pipe never fills and stalls it."""
    import gevent

    stdout = child.stdout
    assert stdout is not None  # every child is started with stdout=PIPE
    line = ""
    with gevent.Timeout(CHILD_START_SECONDS, False):
        line = stdout.readline()
    found = LISTENING.search(line)
    if found is None:
        return None
    gevent.spawn(lambda: [print(rest, end="", flush=True) for rest in stdout])
    return found.group(1)


def run(host: str, port: int, mock_port: int, state_dir: str, model_port: int | None = None) -> int:
    """Serve the demo until SIGTERM or Ctrl-C: bind the service, start the mock backend and the scripted model
    (unless a real one is configured) as `toolgate` child processes, then serve through the one loop.

    DemoCannotStart when the service's address is taken or a child did not start.
    """
    import gevent

    from service import create_app
    from service.limits import STOP_GRACE_SECONDS
    from service.server import service_server
    from serving import listen, serve, url_of

    state = Path(state_dir)
    state.mkdir(exist_ok=True)
    try:  # first, so the issuer the mock trusts has the real port (`--port 0` works)
        listener = listen(host, port)
    except OSError as error:
        raise DemoCannotStart(f"cannot listen on {host}:{port}: {error}") from None
    base = url_of(listener)
    config = Config.from_env().with_overrides(public_url=base, secret_key=_secret(state))
    if not config.allowed_networks:  # the demo's endpoints live on loopback; production allows none by default
        config = config.with_overrides(allowed_networks=("127.0.0.0/8",))
    issuer = config.issuer(DEMO_ORG)
    scripted_model = not config.model
    children: list[subprocess.Popen] = []
    try:
        # Side by side, as each takes a Python start-up.
        children.append(_start_child(["mock-backend", "--host", host, "--port", str(mock_port), "--issuer", issuer]))
        if scripted_model:  # a model that follows a script about the demo shop, so turns run offline
            model_port = mock_port + 1 if model_port is None else model_port
            children.append(_start_child(["model-server", "--host", host, "--port", str(model_port)]))
        urls = [reading.get() for reading in [gevent.spawn(_printed_url, child) for child in children]]
        for url, what in zip(urls, ("the mock backend", "the scripted model")):
            if url is None:
                raise DemoCannotStart(f"{what} did not start")
        mock = urls[0]
        if scripted_model:
            config = config.with_overrides(model_provider="openai", model_base_url=f"{urls[1]}/v1", model="scripted")
        keys = prepare(config, state, mock)
        model = (f"{config.model_base_url} (a scripted model about the demo shop; set TOOLGATE_MODEL for a real one)"
                 if scripted_model else f"{config.model_provider}: {config.model}")
        return serve(service_server(listener, create_app(config)), ready=banner(base, mock, keys, issuer, model),
                     grace=STOP_GRACE_SECONDS)
    finally:
        listener.close()
        for child in children:
            child.terminate()
        for child in children:
            child.wait(timeout=5)
