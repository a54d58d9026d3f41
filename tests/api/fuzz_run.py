"""schemathesis against a service of its own, in a process of its own: every operation of /openapi.json, with its
examples, boundary cases, fuzzed cases and the links between operations followed, each with the credential its
`security` names (settings and seed in `schemathesis.toml`). test_schemathesis.py starts it at the run's first test
and reads its outcome at the end; the service and the scripted model run here, under gevent, and the run is the
CLI's, in a process of its own again (no gevent there).

Nothing leaves the machine. The fuzzed API key belongs to one organization; the session token belongs to another,
whose tools this run registers itself at documentation and loopback addresses. TOOLGATE_ALLOWED_NETWORKS is empty,
so the dispatcher refuses each of those calls before connecting, and an IP literal needs no name lookup. Tool URLs
the fuzzer registers are never dispatched: no session token of their organization exists. The model is the scripted
one on 127.0.0.1.

    python -m tests.api.fuzz_run sqlite|postgres FOLDER

st's output lands in FOLDER/st.out and FOLDER/st.err; the exit status is st's.
"""
# gevent must patch before anything imports socket, ssl or threading (STYLE: first line of each process entry point).
from gevent import monkey

monkey.patch_all()

from psycogreen.gevent import patch_psycopg  # noqa: E402

patch_psycopg()  # PostgreSQL waits cooperate with gevent, as in `service.entry`

import contextlib  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from tests.support.constants import POSTGRES_URL  # noqa: E402
from tests.support.databases import drop_spare_schemas, fresh_postgres_schema  # noqa: E402
from tests.support.live import live_service  # noqa: E402
from tests.turns.conftest import scripted_model  # noqa: E402

CONFIG = Path(__file__).with_name("schemathesis.toml")
#: The run's bound, far above what it takes (the cases are bounded in the config); a hang fails, not stalls.
ST_TIMEOUT_SECONDS = 240

#: The conversation organization's tools: each address one the dispatcher refuses (documentation range; loopback
#: is not allowed here).
CONVERSATION_TOOLS = [
    {"name": "get_orders", "description": "The person's orders.", "method": "GET", "scope": "per_user",
     "url": "http://192.0.2.10/users/{subject}/orders",
     "parameters": [{"name": "subject", "type": "string", "location": "path"},
                    {"name": "status", "type": "string", "location": "query", "required": False}]},
    {"name": "whoami", "description": "Who the person is.", "method": "GET", "scope": "per_user",
     "runs_at_session_start": True, "url": "http://127.0.0.1:9/users/{subject}",
     "parameters": [{"name": "subject", "type": "string", "location": "path"}]},
]


#: The scripted model, for every message: call a tool (refused before connecting), then answer with what it got.
MODEL_SCRIPT = [{"when": [""], "responses": [
    {"calls": [{"id": "c1", "name": "get_orders", "arguments": {"status": "open"}}]},
    {"text": "Here is what I found: {results}"}]}]


def conversation_token(service) -> str:
    """A second organization with a published project `shop` and a draft of it; a session token of it."""
    from service.database import db
    from service.provisioning import create_organization_with_keys
    from service.registry import create_api_key, get_organization

    with db.connection_context():
        admin = create_organization_with_keys(service.config, "talk")
        backend = create_api_key(get_organization("talk"), "backend")

    def call(method, path, body=None, status=201):
        response = service.api(method, path, admin, json=body)
        assert response.status_code == status, response.text

    call("POST", "/v1/projects", {"name": "shop"})
    for definition in CONVERSATION_TOOLS:
        call("POST", "/v1/tools", definition)
    call("PUT", "/v1/projects/shop/draft", {"pins": [{"tool": t["name"], "version": "draft"}
                                                     for t in CONVERSATION_TOOLS]}, status=200)
    call("POST", "/v1/projects/shop/publish")
    call("POST", "/v1/projects/shop/draft")
    minted = service.api("POST", "/v1/session-tokens", backend, json={"subject": "alice", "ttl_seconds": 1800})
    assert minted.status_code == 201, minted.text
    return minted.json()["token"]


@contextlib.contextmanager
def database(engine: str):
    if engine == "sqlite":
        yield None
    else:
        with fresh_postgres_schema(POSTGRES_URL) as url:
            yield url


def run(engine: str, folder: Path) -> int:
    """st against a fresh service on `engine`; its exit status, its output in `folder`."""
    with scripted_model(MODEL_SCRIPT) as model, database(engine) as url, live_service(
            folder, url, allowed_networks=(), model_provider="openai", model="scripted-model",
            model_base_url=model.base_url("openai")) as service:
        environment = {**os.environ, "TOOLGATE_URL": service.url, "TOOLGATE_ADMIN_KEY": service.admin_key,
                       "TOOLGATE_SESSION_TOKEN": conversation_token(service), "TOOLGATE_FUZZ_ENGINE": engine,
                       "NO_COLOR": "1"}
        done = subprocess.run(
            [str(Path(sys.executable).with_name("st")), "--config-file", str(CONFIG), "run",
             f"{service.url}/openapi.json"],
            cwd=folder, env=environment, capture_output=True, text=True, timeout=ST_TIMEOUT_SECONDS)
    (folder / "st.out").write_text(done.stdout)
    (folder / "st.err").write_text(done.stderr)
    return done.returncode


def main(argv: list[str]) -> int:
    engine, folder = argv
    try:
        return run(engine, Path(folder))
    finally:
        if POSTGRES_URL:
            drop_spare_schemas()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
