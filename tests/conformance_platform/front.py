"""A broken platform: a proxy in front of the real one that breaks promises on demand.

`Front` forwards every request to the real platform and, for each fault switched on in `faults`,
bends one promise on the way: it rewords a violation, fakes a 200 for a write to a published
version, reports a wrong failure kind, offers a tool the token is not entitled to, and so on.
Some faults take a pattern of tool names, so they break only the tools of the cases meant to
catch them (the kit names every tool `<run>_<area>_<case>…`).

It also serves the organization's key set with one more key, the double's own, so that the back
double (between platform and mock) can re-sign assertions it tampers with.

Calls held for the person's approval are remembered as steps answer them (their tool, conversation and
token), so the approval faults can act as a platform with that bug would: approve a held call at once,
take a decline for an approval, claim a refused decision succeeded, or look an approval up by its id alone;
and a whole turn paused for approval can be answered as if it had simply ended.
"""
from __future__ import annotations

import json
import math
import re
import time
from typing import Any

import jwt
import requests

from conformance.limits import RESPONSE_CAP_CHARS
from tests.conformance_platform.forwarding import (
    UPSTREAM_TIMEOUT_SECONDS,
    Incoming,
    Outgoing,
    passable,
    received,
    send,
)
from tests.conformance_platform.state import Shared

ROUTES = {
    "tools": r"/v1/tools", "tool": r"/v1/tools/(?P<name>[^/]+)", "draft": r"/v1/tools/(?P<name>[^/]+)/draft",
    "publish": r"/v1/tools/(?P<name>[^/]+)/publish",
    "version": r"/v1/tools/(?P<name>[^/]+)/versions/(?P<number>\d+)",
    "project": r"/v1/projects/(?P<name>[^/]+)", "pins": r"/v1/projects/(?P<name>[^/]+)/draft",
    "project-publish": r"/v1/projects/(?P<name>[^/]+)/publish", "open": r"/v1/conversations",
    "conversation": r"/v1/conversations/(?P<id>[^/]+)", "offered": r"/v1/conversations/(?P<id>[^/]+)/tools",
    "step": r"/v1/conversations/(?P<id>[^/]+)/turns/[^/]+/steps",
    "messages": r"/v1/conversations/(?P<id>[^/]+)/messages",
    "approvals": r"/v1/conversations/(?P<id>[^/]+)/approvals",
    "decision": r"/v1/conversations/(?P<id>[^/]+)/approvals/(?P<approval>[^/]+)",
    "jwks": r"/orgs/[^/]+/\.well-known/jwks\.json", "rotate": r"/v1/keys/rotate", "mcp": r"/mcp",
    "mcp-project": r"/mcp/projects/(?P<project>[^/]+)",
}
# Before "tool", which would take `import` for a tool's name.
ROUTES = {"import": r"/v1/tools/import", **ROUTES}
SWAPPED_KINDS = {"refused": "returned-nothing", "returned-nothing": "refused", "response-too-big": "refused",
                 "timed-out": "transport-error", "transport-error": "timed-out", "unknown-tool": "invalid-arguments",
                 "invalid-arguments": "unknown-tool", "shape-failed": "refused"}
#: What a tool lets the model see (docs/shaping.md): a registry that drops them serves every tool plain.
SHAPING_FIELDS = ("response_shape", "error_fields", "outcome_messages")
LEAKED = "Traceback (most recent call last): the endpoint's stack trace"


def route(incoming: Incoming) -> tuple[str | None, dict[str, str]]:
    """Which API route a request is for, and its path parameters."""
    for name, pattern in ROUTES.items():
        found = re.fullmatch(pattern, incoming.path)
        if found:
            return name, found.groupdict()
    return None, {}


def claims_of(incoming: Incoming) -> dict[str, Any]:
    """The unverified claims of the request's Bearer token ({} when it is an API key)."""
    token = incoming.headers.get("Authorization", "").partition(" ")[2]
    try:
        return jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return {}


class Front:
    """The proxy in front of the platform. Set `upstream` and `admin_key` once the platform is up."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.upstream = ""
        self.admin_key = ""
        self.faults: dict[str, Any] = {}

    def on(self, fault: str, name: str | None = None) -> bool:
        """Whether `fault` is switched on (for the tool `name`, when the fault takes a pattern)."""
        if fault not in self.faults:
            return False
        pattern = self.faults[fault]
        return not isinstance(pattern, str) or (name is not None and re.search(pattern, name) is not None)

    def admin(self, method: str, path: str, body: Any = None) -> requests.Response:
        """A call of the double's own to the real platform, with the admin key."""
        return requests.request(method, self.upstream + path, json=body, timeout=UPSTREAM_TIMEOUT_SECONDS,
                                headers={"Authorization": f"Bearer {self.admin_key}"})

    def handle(self, incoming: Incoming) -> Outgoing:
        """Fake an answer, or forward (the request bent by the faults on) and bend the answer."""
        kind, params = route(incoming)
        fake = self.before(kind, params, incoming)
        if fake is not None:
            return fake
        outgoing = received(send(self.upstream, incoming))
        self.record(kind, params, incoming, outgoing)
        return self.after(kind, params, incoming, outgoing)

    # Before forwarding: fake an answer, or change the request ----------------------------------

    def before(self, kind: str | None, params: dict[str, str], incoming: Incoming) -> Outgoing | None:
        """A faked answer, or None after changing the request as the faults on say."""
        body = incoming.json()
        if kind in ("tools", "version", "draft", "tool"):
            return self.fake_registry_answer(kind, params.get("name"), params, incoming, body)
        return self.bend_request(kind, params, incoming, body)

    def fake_registry_answer(self, kind: str, name: str | None, params: dict[str, str], incoming: Incoming,
                             body: Any) -> Outgoing | None:
        """A registry that refuses what it must take, writes what it must refuse, or publishes on a save."""
        if kind == "tools" and incoming.method == "POST" and isinstance(body, dict):
            if self.on("refuse-named", str(body.get("name"))):
                return Outgoing.of_json(422, {"errors": [{"field": "name", "rule": "overzealous",
                                                          "message": "Refused by a broken registry."}]})
            if self.on("shaping-ignored", str(body.get("name"))):
                incoming.body = json.dumps({k: v for k, v in body.items() if k not in SHAPING_FIELDS}).encode()
        if kind == "version" and incoming.method in ("PUT", "PATCH", "DELETE") and self.on("fake-published-write"):
            return Outgoing.of_json(200, {"version": int(params["number"]), "name": name})
        if kind == "draft" and incoming.method == "PUT" and isinstance(body, dict):
            if self.on("rename-allowed") and body.get("name") not in (None, name):
                return Outgoing.of_json(200, self.admin("GET", f"/v1/tools/{name}").json())
            if self.on("save-publishes", name):  # every save mints a version and starts a fresh draft
                self.admin("POST", f"/v1/tools/{name}/publish")
                self.admin("POST", f"/v1/tools/{name}/draft")
        if kind == "tool" and incoming.method == "PATCH" and self.on("label-frozen"):
            return Outgoing.of_json(409, {"errors": [{"field": "display_name", "rule": "frozen",
                                                      "message": "A published tool cannot be relabelled."}]})
        return None

    def bend_request(self, kind: str | None, params: dict[str, str], incoming: Incoming, body: Any) -> Outgoing | None:
        """A conversation, step, import, decision or key rotation as the faults on change it (or a faked refusal)."""
        if kind == "open" and isinstance(body, dict):
            if body.get("version") == "draft" and self.on("no-draft-conversations"):
                return Outgoing.of_json(404, {"errors": [{"field": "version", "rule": "not-found",
                                                          "message": "No such version."}]})
            if self.on("opens-ignore-entitlements"):
                self.entitle_everything(incoming)
        if kind == "step":
            for call in (body or {}).get("calls", []) if isinstance(body, dict) else []:
                arguments = call.get("arguments") if isinstance(call, dict) else None
                for key, value in (arguments.items() if isinstance(arguments, dict) else ()):
                    if key.lower() == "subject":
                        self.shared.model_subjects[call.get("name")] = value
            if self.on("steps-ignore-entitlements"):
                self.entitle_everything(incoming)
        if kind == "import" and isinstance(body, dict):
            self.bend_import_request(incoming, body)
        if kind == "decision" and isinstance(body, dict) and body.get("decision") == "decline" \
                and self.on("decline-approves", self.held_tool(params["approval"])):
            incoming.body = json.dumps({**body, "decision": "approve"}).encode()
        if kind == "rotate" and self.on("jwks-drops-old-key"):
            token = self.admin("POST", "/v1/session-tokens", {"subject": "double"}).json()["token"]
            self.shared.retired_kids.add(jwt.get_unverified_header(token)["kid"])
        return None

    def bend_import_request(self, incoming: Incoming, body: dict[str, Any]) -> None:
        """An import that writes on a preview, forgets which parameter names the person, or makes only an operation
        marked x-openai-isConsequential: true wait for approval (the rule before GPT Actions')."""
        if self.on("import-preview-writes"):
            body = {**body, "apply": True}
        if self.on("import-ignores-subject"):
            body = {k: v for k, v in body.items() if k != "subject_parameter"}
        if self.on("import-approves-only-marked"):
            body = {**body, "requires_approval": only_marked(body.get("document"))}
        incoming.body = json.dumps(body).encode()

    def bend_import(self, incoming: Incoming, outgoing: Outgoing) -> Outgoing:
        """An import that reads what it must refuse, hides why, or publishes what it wrote."""
        answer = outgoing.json()
        if outgoing.status == 422 and self.on("import-reads-anything"):
            return Outgoing.of_json(200, {"operations": []})
        if outgoing.status != 200 or not isinstance(answer, dict):
            return outgoing
        operations = answer.get("operations") or []
        if self.on("import-publishes"):
            for op in operations:
                if op.get("status") == "created":
                    self.admin("POST", f"/v1/tools/{op['tool']}/publish")
        if self.on("import-silences"):
            applied = (incoming.json() or {}).get("apply") is True
            operations = [{**op, "errors": [], "not_carried": [],
                           "status": ("created" if applied else "ready") if op.get("status") == "refused"
                           else op.get("status")} for op in operations]
        return outgoing.with_json({**answer, "operations": operations})

    def entitle_everything(self, incoming: Incoming) -> None:
        """Swap the session token for one of the same person carrying every entitlement ever required, expiring
        no later than it does (an approval never outlives the token that made it). The platform counts a new token's
        life from its own clock's whole second, which may have turned since `left` was read: the new token lives
        the whole seconds left, and is used only if it expires no later. A token with less than a second left (or
        past its expiry, still taken within the leeway) is left as it is."""
        claims = claims_of(incoming)
        whole_seconds_left = math.floor(claims.get("exp", 0) - time.time())
        if whole_seconds_left < 1:
            return
        minted = self.admin("POST", "/v1/session-tokens", {
            "subject": claims.get("sub"), "anonymous": claims.get("anon", False), "ttl_seconds": whole_seconds_left,
            "entitlements": sorted(self.shared.required_entitlements())}).json()
        if jwt.decode(minted["token"], options={"verify_signature": False})["exp"] <= claims["exp"]:
            incoming.headers["Authorization"] = f"Bearer {minted['token']}"

    # What the double remembers, whatever the faults -------------------------------------------

    def record(self, kind: str | None, params: dict[str, str], incoming: Incoming, outgoing: Outgoing) -> None:
        """Remember registrations, pins and conversations, which the faults on offered tools need."""
        body, answer = incoming.json(), outgoing.json()
        if kind == "tools" and incoming.method == "POST" and outgoing.status == 201:
            self.shared.definitions[body["name"]] = body
        if kind == "pins" and incoming.method == "PUT" and outgoing.status == 200:
            self.shared.pins[params["name"]] = [p.get("tool") for p in body.get("pins", [])]
        if kind == "open" and outgoing.status == 201 and isinstance(answer, dict):
            self.shared.conversations[answer["id"]] = body.get("project")
        if kind == "step" and outgoing.status == 200 and isinstance(answer, dict):
            for result in answer.get("results", []):
                approval = result.get("approval") if isinstance(result, dict) else None
                if isinstance(approval, dict) and approval.get("id"):
                    self.shared.held[approval["id"]] = (result.get("name"), params["id"],
                                                        incoming.headers.get("Authorization", ""))

    def held_tool(self, approval: str) -> str | None:
        """The tool of a held call, by its approval's id, if a step answered it through this double."""
        return (self.shared.held.get(approval) or (None,))[0]

    # After forwarding: change the answer ------------------------------------------------------

    def after(self, kind: str | None, params: dict[str, str], incoming: Incoming, outgoing: Outgoing) -> Outgoing:
        """The platform's answer as the faults on bend it."""
        answer, name = outgoing.json(), params.get("name")
        if kind == "import":
            return self.bend_import(incoming, outgoing)
        if kind == "decision":  # before the refusals' own bending: a refused decision may be answered otherwise
            outgoing = self.bend_decision(params["approval"], incoming, outgoing)
            answer = outgoing.json()
        if kind in ("publish", "project-publish") and outgoing.status == 403 and self.on("agent-publishes", name):
            return received(self.admin("POST", incoming.path))  # the agent's publish goes through after all
        if isinstance(answer, dict) and outgoing.status >= 400 and isinstance(answer.get("errors"), list):
            return outgoing.with_json(self.bend_violations(answer))
        if kind in ("tools", "draft", "version", "publish", "project-publish", "project"):
            return self.bend_registry_answer(kind, name, incoming, outgoing, answer)
        return self.bend_conversation_answer(kind, params, incoming, outgoing, answer)

    def bend_registry_answer(self, kind: str, name: str | None, incoming: Incoming, outgoing: Outgoing,
                             answer: Any) -> Outgoing:
        """A registry's answer that publishes on its own, starts drafts blank, or hides what a publish moved."""
        if kind == "tools" and outgoing.status == 201 and self.on("register-publishes", answer.get("name")):
            self.admin("POST", f"/v1/tools/{answer['name']}/publish")
        if kind == "draft" and incoming.method == "POST" and outgoing.status == 201 and self.on("new-draft-blank"):
            definition = {**answer["draft"]["definition"], "description": "Started blank by a broken registry."}
            saved = received(self.admin("PUT", f"/v1/tools/{name}/draft", definition))
            return Outgoing(outgoing.status, saved.headers, saved.body)
        if kind == "version" and outgoing.status == 200 and self.on("version-follows-draft", name):
            draft = self.admin("GET", f"/v1/tools/{name}").json().get("draft")
            if draft:
                return outgoing.with_json({**answer, "definition": draft["definition"]})
        if kind in ("publish", "project-publish") and outgoing.status == 201 and self.on("publish-keeps-pins"):
            # A platform whose publish leaves other projects' drafts pinning the consumed draft says it moved none.
            return outgoing.with_json({**answer, "repinned": []})
        if kind == "project" and outgoing.status == 200 and self.on("cascade-pins-draft"):
            versions = [{**v, "pins": [{**p, "version": "draft"} for p in v.get("pins", [])]}
                        for v in answer.get("versions", [])]
            return outgoing.with_json({**answer, "versions": versions})
        return outgoing

    def bend_conversation_answer(self, kind: str | None, params: dict[str, str], incoming: Incoming,
                                 outgoing: Outgoing, answer: Any) -> Outgoing:
        """A step's results, a turn, the context and tools offered, the JWKS or an MCP result, as the faults bend
        them."""
        if kind == "step" and outgoing.status == 200:
            self.send_held_at_once(answer.get("results", []))
            return outgoing.with_json({**answer, "results": self.bend_results(answer.get("results", []))})
        if kind == "messages" and outgoing.status == 200 and isinstance(answer, dict):
            return outgoing.with_json(self.bend_turn(answer))
        if kind in ("open", "conversation") and outgoing.status in (200, 201):
            answer = {**answer, "context": self.bend_context(answer.get("context", []))}
            answer["tools"] = self.bend_offered(answer["id"], answer.get("tools", []), incoming)
            return outgoing.with_json(answer)
        if kind == "offered" and outgoing.status == 200:
            return outgoing.with_json({"tools": self.bend_offered(params["id"], answer.get("tools", []), incoming)})
        if kind == "jwks" and outgoing.status == 200:
            return self.bend_jwks(outgoing, answer)
        if kind == "mcp" and isinstance((answer or {}).get("result"), dict):
            return outgoing.with_json({**answer, "result": self.bend_mcp(incoming, answer["result"])})
        if kind == "mcp-project":
            return self.bend_project_mcp(incoming, outgoing, answer)
        return outgoing

    def bend_project_mcp(self, incoming: Incoming, outgoing: Outgoing, answer: Any) -> Outgoing:
        """A project's MCP server that challenges without its metadata, offers the subject, hands over the
        endpoint's error body, or answers a held call as a failure."""
        if outgoing.status == 401 and self.on("mcp-challenge-without-metadata"):
            return Outgoing(401, {**outgoing.headers, "WWW-Authenticate": 'Bearer realm="toolgate"'}, outgoing.body)
        result = (answer or {}).get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict):
            return outgoing
        if isinstance(result.get("tools"), list) and self.on("mcp-project-subject-offered"):
            tools = [{**t, "inputSchema": {**t.get("inputSchema", {}), "properties": {
                **t.get("inputSchema", {}).get("properties", {}), "subject": {"type": "string"}}}}
                for t in result["tools"]]
            result = {**result, "tools": tools}
        if result.get("isError") is True and self.on("mcp-project-error-bodies"):
            result = {**result, "content": [{"type": "text", "text": LEAKED}]}
        if "approval" in (result.get("structuredContent") or {}) and self.on("mcp-project-held-as-error"):
            result = {**result, "isError": True}
        return outgoing.with_json({**answer, "result": result})

    def bend_violations(self, answer: dict[str, Any]) -> dict[str, Any]:
        """A refusal's violations, reworded or cut short."""
        errors = answer["errors"]
        if self.on("reword"):
            errors = [{**e, "message": str(e.get("message", "")).rstrip(".") + " (reworded)"} for e in errors]
        if self.on("drop-extra"):
            errors = errors[:1]
        return {**answer, "errors": errors}

    def bend_mcp(self, incoming: Incoming, result: dict[str, Any]) -> dict[str, Any]:
        """An agent offered a way to publish; a tool error's violations bent like the REST API's."""
        if (incoming.json() or {}).get("method") == "tools/list" and self.on("mcp-offers-publish"):
            result = {**result, "tools": result.get("tools", []) + [
                {"name": "publish_tool", "description": "Publish a draft.", "inputSchema": {"type": "object"}}]}
        content = result.get("structuredContent")
        if isinstance(content, dict) and isinstance(content.get("errors"), list):
            result = {**result, "structuredContent": self.bend_violations(content)}
        return result

    def bend_results(self, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A step's results with wrong kinds, leaked bodies, failures made of successes, or out of order."""
        bent = []
        for result in results:
            result = dict(result)
            error, output = result.get("error"), result.get("output")
            if error and self.on("swap-kinds"):
                result["error"] = {**error, "kind": SWAPPED_KINDS.get(error.get("kind"), error.get("kind"))}
            if error and self.on("error-bodies"):
                result["error"] = {**result["error"], "body": LEAKED}
            if output == "" and self.on("empty-is-failure"):
                result = {"id": result.get("id"), "name": result.get("name"),
                          "error": {"status": "error", "kind": "returned-nothing", "httpCode": 200}}
            if isinstance(output, str) and len(output) == RESPONSE_CAP_CHARS and self.on("cap-off-by-one"):
                result = {"id": result.get("id"), "name": result.get("name"),
                          "error": {"status": "error", "kind": "response-too-big", "httpCode": 200}}
            bent.append(result)
        return bent[::-1] if self.on("shuffle-results") else bent

    def send_held_at_once(self, results: list[dict[str, Any]]) -> None:
        """A platform that sends a held call at once, before anyone approves it (its answer still says held)."""
        for result in results:
            approval = result.get("approval") if isinstance(result, dict) else None
            if isinstance(approval, dict) and self.on("send-at-once", self.held_tool(str(approval.get("id")))):
                _, conversation, token = self.shared.held[approval["id"]]
                requests.post(f"{self.upstream}/v1/conversations/{conversation}/approvals/{approval['id']}",
                              json={"decision": "approve"}, headers={"Authorization": token},
                              timeout=UPSTREAM_TIMEOUT_SECONDS)

    def bend_decision(self, approval: str, incoming: Incoming, outgoing: Outgoing) -> Outgoing:
        """A decision refused for someone else or some other conversation made anyway (the approval looked up by its
        id alone), or a refused decision answered as if it had been taken."""
        tool = self.held_tool(approval)
        if outgoing.status == 404 and approval in self.shared.held and self.on("decide-anywhere", tool):
            _, conversation, token = self.shared.held[approval]
            return received(requests.post(f"{self.upstream}/v1/conversations/{conversation}/approvals/{approval}",
                                          data=incoming.body, headers={"Authorization": token,
                                                                       "Content-Type": "application/json"},
                                          timeout=UPSTREAM_TIMEOUT_SECONDS))
        if outgoing.status == 409 and self.on("decisions-succeed", tool):
            return Outgoing.of_json(200, {"approval": {"id": approval, "status": "approved"},
                                          "result": {"id": "0", "name": tool, "output": ""}})
        return outgoing

    def bend_turn(self, answer: dict[str, Any]) -> dict[str, Any]:
        """A whole turn paused for approval answered as if it had simply ended: no stop, no approvals awaited."""
        awaited = [a.get("tool") for a in answer.get("approvals") or [] if isinstance(a, dict)]
        if any(self.on("pause-unreported", tool) for tool in awaited):
            return {**answer, "stopped": None, "approvals": []}
        return answer

    def bend_context(self, context: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Session-start context items with a leaked body, or unlabelled."""
        bent = []
        for item in context:
            if "error" in item and self.on("context-error-body"):
                item = {**item, "output": LEAKED}
            if self.on("context-unlabelled"):
                item = {k: v for k, v in item.items() if k != "description"} | {"authoritative": False}
            bent.append(item)
        return bent

    def bend_offered(self, conversation: str, tools: list[dict[str, Any]], incoming: Incoming) -> list[dict[str, Any]]:
        """The offered tools with ones the model must not see added, the subject shown, or none at all."""
        if self.on("hide-from-anonymous") and claims_of(incoming).get("anon") is True:
            return []
        pinned = [self.shared.definitions.get(n, {}) for n in
                  self.shared.pins.get(self.shared.conversations.get(conversation), [])]
        offered = {t.get("name") for t in tools}
        for definition in pinned:
            gated = definition.get("required_entitlement") and not definition.get("runs_at_session_start")
            starts = definition.get("runs_at_session_start")
            if definition.get("name") not in offered and ((gated and self.on("offer-unentitled"))
                                                          or (starts and self.on("session-start-offered"))):
                tools = tools + [{"name": definition["name"], "description": definition.get("description"),
                                  "parameters": {"type": "object", "properties": {}}}]
        if self.on("subject-offered"):
            tools = [{**t, "parameters": {**t.get("parameters", {}), "required": ["subject"],
                                          "properties": {**t.get("parameters", {}).get("properties", {}),
                                                         "subject": {"type": "string"}}}} for t in tools]
        return tools

    def bend_jwks(self, outgoing: Outgoing, answer: dict[str, Any]) -> Outgoing:
        """The key set with the double's key added, and retired or uncacheable as the faults say."""
        keys = [k for k in answer.get("keys", []) if k.get("kid") not in self.shared.retired_kids]
        keys.append(self.shared.double_key.public_jwk())
        if self.on("jwks-uncacheable"):
            keys = [{k: v for k, v in key.items() if k != "use"} for key in keys]
            outgoing = Outgoing(outgoing.status, passable({k: v for k, v in outgoing.headers.items()
                                                           if k.lower() != "cache-control"}), outgoing.body)
        return outgoing.with_json({**answer, "keys": keys})


def only_marked(document: Any) -> dict[str, bool]:
    """Each operation of a kit's (JSON) document by operationId → whether it is marked consequential: true."""
    try:
        paths = json.loads(document).get("paths") or {}
    except (TypeError, ValueError, AttributeError):
        return {}
    return {op["operationId"]: op.get("x-openai-isConsequential") is True
            for item in paths.values() if isinstance(item, dict)
            for op in item.values() if isinstance(op, dict) and isinstance(op.get("operationId"), str)}
