"""The platform under test, as the kit reaches it: over HTTP, with an organization's API keys.

`PlatformTarget` is what every platform case receives. It names things for the run (every run has
a random prefix, so cases never share a tool or project and a shared deployment can be checked
again and again), calls the REST API, mints session tokens, drives conversations, and reads the
mock backend's record of the calls it received. A setup step the platform refuses raises
`SetupRefused`: the case cannot check its requirement, and the runner reports it as errored.
"""
from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping
from urllib.parse import urlencode

import jwt
import requests

from conformance.limits import CALL_DEADLINE_SECONDS, EXCERPT_CHARS
from conformance.platform.budgets import REQUEST_TIMEOUT_SECONDS


class SetupRefused(Exception):
    """The platform refused a step a case needed before it could check anything."""


@dataclass(frozen=True)
class Reply:
    """One answer of the platform: status, parsed JSON body (None if not JSON), raw text, time taken."""

    status: int
    body: Any
    text: str
    seconds: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)  # case-insensitive when from a response

    def describe(self) -> str:
        """The answer in a few words, for a failure report's `actual`."""
        excerpt = self.text[:EXCERPT_CHARS] + ("…" if len(self.text) > EXCERPT_CHARS else "")
        return f"HTTP {self.status} {excerpt}".rstrip()

    def violations(self) -> list[dict[str, Any]]:
        """The `errors` list of a refusal, or [] when there is none."""
        errors = self.body.get("errors") if isinstance(self.body, dict) else None
        return errors if isinstance(errors, list) else []


def expect_status(reply: Reply, status: int, doing: str) -> Reply:
    """The reply, or SetupRefused when it is not `status`."""
    if reply.status != status:
        raise SetupRefused(f"{doing}: expected HTTP {status}, got {reply.describe()}")
    return reply


def published_number(reply: Reply) -> Any:
    """The `version` a publish answered with, or None when the body is not an object."""
    return reply.body.get("version") if isinstance(reply.body, dict) else None


def tool(name: str, url: str, *, scope: str = "shared", parameters: Iterable[dict] = (),
         method: str = "GET", **extra: Any) -> dict[str, Any]:
    """A definition with a description written for the model and everything else as given."""
    return {"name": name, "description": f"The {name} tool of the conformance kit.", "method": method,
            "url": url, "scope": scope, "parameters": list(parameters), **extra}


#: The reserved subject, placed in the URL path.
SUBJECT_IN_PATH = {"name": "subject", "type": "string", "location": "path"}


def new_run_prefix() -> str:
    """A prefix no other run shares: a letter, so it can start a tool name, then random hex."""
    return "cf" + secrets.token_hex(4)


@dataclass
class PlatformTarget:
    """One organization on a running platform, and the mock backend its tools call."""

    url: str
    admin_key: str
    mock_url: str
    agent_key: str | None = None
    run: str = field(default_factory=new_run_prefix)
    issuer: str = ""
    #: The scripted model the platform runs turns with (a `model.ScriptedModel`), if the kit has one.
    model: Any = None
    #: The call deadline the platform keeps: the spec's ten seconds, unless the kit's own tests lowered it.
    deadline: float = CALL_DEADLINE_SECONDS

    def __post_init__(self) -> None:
        self.url = self.url.rstrip("/")
        self.mock_url = self.mock_url.rstrip("/")

    @property
    def subject(self) -> str:
        """The person every case's sessions are for, unless a case says otherwise."""
        return f"{self.run}-alice"

    # Names -------------------------------------------------------------------------------------

    def name(self, *parts: str) -> str:
        """A tool name of this run: `cf1a2b3c4d_failure_refused`."""
        return "_".join([self.run, *parts]).replace("-", "_").replace("/", "_")

    def project(self, *parts: str) -> str:
        """A project name of this run: `cf1a2b3c4d-failure-refused`."""
        return "-".join([self.run, *parts]).replace("_", "-").replace("/", "-")

    def mock(self, tool_name: str, behaviour: str) -> str:
        """The URL of one of the mock's behaviours, served for `tool_name` (the assertion's aud)."""
        return f"{self.mock_url}/tools/{tool_name}/{behaviour.lstrip('/')}"

    # The REST API ------------------------------------------------------------------------------

    def request(self, method: str, url: str, token: str | None, body: Any = None,
                headers: dict[str, str] | None = None) -> Reply:
        """One bounded HTTP request with `token` as the Bearer; any transport failure raises."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        started = time.monotonic()
        with requests.Session() as session:
            session.trust_env = False
            response = session.request(method, url, json=body, headers=sent, allow_redirects=False,
                                       timeout=REQUEST_TIMEOUT_SECONDS)
        try:
            parsed = response.json()
        except ValueError:
            parsed = None
        return Reply(response.status_code, parsed, response.text, time.monotonic() - started,
                     response.headers)

    def api(self, method: str, path: str, body: Any = None, key: str | None = None) -> Reply:
        """Call the platform's API with an API key (the admin key unless given)."""
        return self.request(method, self.url + path, key or self.admin_key, body)

    def register(self, definition: dict[str, Any], key: str | None = None) -> Reply:
        """POST /v1/tools."""
        return self.api("POST", "/v1/tools", definition, key)

    def listed_tools(self, search: str, limit: int = 100, pages: int = 20) -> list[dict[str, Any]]:
        """Every tool `GET /v1/tools?q=search` lists, following `next` page by page (at most `pages` pages)."""
        found: list[dict[str, Any]] = []
        after = None
        for _ in range(pages):
            query = urlencode({"q": search, "limit": limit, **({"after": after} if after else {})})
            page = expect_status(self.api("GET", f"/v1/tools?{query}"), 200, "listing tools").body
            found += page.get("tools", [])
            after = page.get("next")
            if not after:
                break
        return found

    def read_tool(self, name: str) -> dict[str, Any]:
        """GET /v1/tools/{name}, which must answer 200."""
        return expect_status(self.api("GET", f"/v1/tools/{name}"), 200, f"reading tool {name}").body

    def create_project(self, project: str) -> None:
        """POST /v1/projects, which must answer 201."""
        expect_status(self.api("POST", "/v1/projects", {"name": project}), 201, f"creating project {project}")

    def pin(self, project: str, pins: list[dict[str, Any]]) -> None:
        """PUT the project's draft pins, which must answer 200."""
        expect_status(self.api("PUT", f"/v1/projects/{project}/draft", {"pins": pins}), 200,
                      f"pinning {project}")

    def publish_project(self, project: str, definitions: list[dict[str, Any]]) -> int:
        """Create `project`, register every tool, pin their drafts and publish; the version number."""
        self.create_project(project)
        for definition in definitions:
            expect_status(self.register(definition), 201, f"registering {definition['name']}")
        self.pin(project, [{"tool": d["name"], "version": "draft"} for d in definitions])
        reply = expect_status(self.api("POST", f"/v1/projects/{project}/publish"), 201, f"publishing {project}")
        return reply.body["version"]

    def session_token(self, subject: str | None = None, entitlements: Iterable[str] = (),
                      anonymous: bool = False, ttl_seconds: int | None = None) -> str:
        """A session token minted through the platform (living `ttl_seconds`, or the platform's default); the
        first also tells the kit its issuer."""
        body: dict[str, Any] = {"subject": self.subject if subject is None else subject,
                                "entitlements": list(entitlements), "anonymous": anonymous}
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        reply = expect_status(self.api("POST", "/v1/session-tokens", body), 201, "minting a session token")
        token = reply.body["token"]
        if not self.issuer:
            self.issuer = jwt.decode(token, options={"verify_signature": False})["iss"]
        return token

    def open(self, project: str, token: str, version: int | str | None = None) -> Reply:
        """POST /v1/conversations with a session token."""
        body: dict[str, Any] = {"project": project}
        if version is not None:
            body["version"] = version
        return self.request("POST", f"{self.url}/v1/conversations", token, body)

    def conversation(self, project: str, token: str | None = None,
                     version: int | str | None = None) -> Conversation:
        """Open a conversation, which must answer 201."""
        token = token or self.session_token()
        opened = expect_status(self.open(project, token, version), 201, f"opening a conversation on {project}")
        return Conversation(self, token, opened.body)

    # The mock backend --------------------------------------------------------------------------

    def calls_to(self, tool_name: str) -> list[dict[str, Any]]:
        """Every call the mock recorded for `tool_name`, oldest first."""
        reply = self.request("GET", f"{self.mock_url}/_calls?tool={tool_name}", None)
        return expect_status(reply, 200, "reading the mock's calls").body["calls"]


class Conversation:
    """A conversation driven over the API with one session token."""

    def __init__(self, target: PlatformTarget, token: str, opened: dict[str, Any]) -> None:
        self.target, self.token, self.opened = target, token, opened
        self.id = opened["id"]

    @property
    def path(self) -> str:
        return f"{self.target.url}/v1/conversations/{self.id}"

    def read(self) -> dict[str, Any]:
        """GET the conversation again."""
        return expect_status(self.target.request("GET", self.path, self.token), 200, "reading the conversation").body

    def tools(self, token: str | None = None) -> list[dict[str, Any]]:
        """The tools offered to the model, for this token or another of the same subject."""
        reply = self.target.request("GET", f"{self.path}/tools", token or self.token)
        return expect_status(reply, 200, "reading the offered tools").body["tools"]

    def turn(self) -> str:
        """Start a turn; its id."""
        reply = self.target.request("POST", f"{self.path}/turns", self.token)
        return expect_status(reply, 201, "starting a turn").body["turn"]

    def step_reply(self, turn: str, *calls: tuple[str, Any]) -> Reply:
        """One model step of `(name, arguments)` calls, ids "0", "1", …: the raw reply."""
        body = {"calls": [{"id": str(i), "name": name, "arguments": arguments}
                          for i, (name, arguments) in enumerate(calls)]}
        return self.target.request("POST", f"{self.path}/turns/{turn}/steps", self.token, body)

    def step(self, turn: str, *calls: tuple[str, Any]) -> list[dict[str, Any]]:
        """One model step; the results matched to the calls by id, in the calls' order."""
        reply = expect_status(self.step_reply(turn, *calls), 200, "running a step")
        by_id = {r.get("id"): r for r in reply.body["results"] if isinstance(r, dict)}
        missing = [str(i) for i in range(len(calls)) if str(i) not in by_id]
        if missing:
            raise SetupRefused(f"the step answered no result for call(s) {', '.join(missing)}: "
                               f"{reply.describe()}")
        return [by_id[str(i)] for i in range(len(calls))]

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        """One call in a step of its own, in a turn of its own: its result."""
        return self.step(self.turn(), (name, {} if arguments is None else arguments))[0]

    def approvals(self, token: str | None = None) -> Reply:
        """GET the conversation's approvals, with this conversation's token or another."""
        return self.target.request("GET", f"{self.path}/approvals", token or self.token)

    def decide(self, approval: str, decision: str, token: str | None = None,
               conversation: str | None = None) -> Reply:
        """POST a decision on a held call, with this conversation's token or another, at this conversation's
        approvals or another conversation's."""
        path = f"{self.target.url}/v1/conversations/{conversation or self.id}/approvals/{approval}"
        return self.target.request("POST", path, token or self.token, {"decision": decision})


def echoed(result: dict[str, Any]) -> dict[str, Any] | None:
    """What the mock's echo saw, from a call's result; None when the result is not an echo."""
    output = result.get("output")
    if not isinstance(output, str):
        return None
    try:
        seen = json.loads(output)
    except ValueError:
        return None
    return seen if isinstance(seen, dict) and "headers" in seen else None


def brief(result: dict[str, Any]) -> str:
    """A call's result in a few words, for a failure report: its error, the echoed request, or its output."""
    if "error" in result:
        return f"error {result['error']}"
    seen = echoed(result)
    if seen is not None:
        return f"output: the echo of {seen.get('method')} {seen.get('path')}"
    output = str(result.get("output", result))
    return f"output {output[:EXCERPT_CHARS]!r}" + ("…" if len(output) > EXCERPT_CHARS else "")


def bearer(target: PlatformTarget, tool: str, seen: dict[str, Any]) -> str | None:
    """The Bearer token the endpoint received, from the mock's call record of the echo `seen`: the echo names its
    record (`call`) and never shows the token itself, since whatever an endpoint answers goes to the model."""
    record = next((c for c in target.calls_to(tool) if c.get("id") == seen.get("call")), None)
    scheme, _, token = str((record or {}).get("authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None
