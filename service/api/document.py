"""The OpenAPI document tells the truth: the one error shape, and every status each operation can answer.

The route decorators say what is particular to a route (a taken name's 409, a stale draft's 412). The statuses that
follow from how a route is built are added here, once for every operation, from the same facts the service acts on:
the credential it takes (401, 403), a name in its path (404), a JSON body (400, 413, 422), a query string (422) and
whether it touches the database (503). `tests/api/test_openapi_document.py` walks the result; schemathesis checks it
against the running service.
"""
from __future__ import annotations

from typing import Any

from apispec import BasePlugin
from flask_smorest import Api, Blueprint

from service.api.schemas import ProblemSchema

#: The two credentials a route can take, as security schemes (both are Bearer tokens).
API_KEY, SESSION_TOKEN = "apiKey", "sessionToken"
SECURITY_SCHEMES = {
    API_KEY: {"type": "http", "scheme": "bearer", "description": "An API key (`tgk_…`) of the organization; "
                                                                 "its role (admin, agent, backend) decides what "
                                                                 "it may do."},
    SESSION_TOKEN: {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                    "description": "A session token minted by the organization's backend (`POST /v1/session-tokens`)."},
}

PROBLEM = {"$ref": "#/components/schemas/Problem"}
RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before trying again.", "required": True,
                               "schema": {"type": "integer"}}}


def _problem(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    response = {"description": description, "content": {"application/json": {"schema": PROBLEM}}}
    if headers:
        response["headers"] = headers
    return response


#: The refusals many routes share, documented once as named responses (`#/components/responses/...`).
RESPONSES = {
    "MalformedBody": _problem("`malformed-body`: the body is not JSON."),
    "Unauthorized": _problem("`unauthorized` or `invalid-session-token`: missing or refused credentials."),
    "Forbidden": _problem("`forbidden`: this key's role may not do that."),
    "NotFound": _problem("`not-found`: no such thing in this organization (another organization's is not found "
                         "either)."),
    "TooLarge": _problem("`request-too-large`: the body is past the service's bound (TOOLGATE_MAX_REQUEST_BYTES); "
                         "refused before it is read."),
    "Invalid": _problem("`invalid`: every broken rule at once, each with its field, rule id and sentence."),
    "TooManyCalls": _problem("`too-many-calls`: the organization already has its share of tool calls in flight "
                             "here; nothing was called.", RETRY_AFTER),
    "Unavailable": _problem("`database-unavailable`: the database is not answering; nothing was changed.",
                            RETRY_AFTER),
}


def _link(method: str, path: str, **parameters: str) -> dict[str, Any]:
    pointer = path.replace("~", "~0").replace("/", "~1")
    return {"operationRef": f"#/paths/{pointer}/{method}", "parameters": parameters}


_CREATED, _SAME = {"name": "$response.body#/name"}, {"name": "$request.path.name"}
_CONVERSATION = {"conversation_id": "$response.body#/id"}
#: Where a success leads (OpenAPI links), so a client or a stateful test can follow one answer to the next call.
LINKS: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {
    ("post", "/v1/tools", "201"): {
        "ReadTool": _link("get", "/v1/tools/{name}", **_CREATED),
        "Relabel": _link("patch", "/v1/tools/{name}", **_CREATED),
        "SaveDraft": _link("put", "/v1/tools/{name}/draft", **_CREATED),
        "Publish": _link("post", "/v1/tools/{name}/publish", **_CREATED),
        "DraftImpact": _link("get", "/v1/tools/{name}/draft/impact", **_CREATED),
        "History": _link("get", "/v1/tools/{name}/history", **_CREATED),
    },
    ("post", "/v1/tools/{name}/publish", "201"): {
        "ReadVersion": _link("get", "/v1/tools/{name}/versions/{number}", **_SAME, number="$response.body#/version"),
        "VersionImpact": _link("get", "/v1/tools/{name}/versions/{number}/impact", **_SAME,
                               number="$response.body#/version"),
        "StartDraft": _link("post", "/v1/tools/{name}/draft", **_SAME),
    },
    ("post", "/v1/projects", "201"): {
        "ReadProject": _link("get", "/v1/projects/{name}", **_CREATED),
        "SavePins": _link("put", "/v1/projects/{name}/draft", **_CREATED),
        "Publish": _link("post", "/v1/projects/{name}/publish", **_CREATED),
        "WhyNotOffered": _link("get", "/v1/projects/{name}/why-not-offered", **_CREATED),
    },
    ("post", "/v1/projects/{name}/publish", "201"): {
        "StartDraft": _link("post", "/v1/projects/{name}/draft", **_SAME),
    },
    ("post", "/v1/conversations", "201"): {
        "ReadConversation": _link("get", "/v1/conversations/{conversation_id}", **_CONVERSATION),
        "OfferedTools": _link("get", "/v1/conversations/{conversation_id}/tools", **_CONVERSATION),
        "StartTurn": _link("post", "/v1/conversations/{conversation_id}/turns", **_CONVERSATION),
        "History": _link("get", "/v1/conversations/{conversation_id}/messages", **_CONVERSATION),
        "SendMessage": _link("post", "/v1/conversations/{conversation_id}/messages", **_CONVERSATION),
    },
    ("post", "/v1/conversations/{conversation_id}/turns", "201"): {
        "RunStep": _link("post", "/v1/conversations/{conversation_id}/turns/{turn_id}/steps",
                         conversation_id="$request.path.conversation_id", turn_id="$response.body#/turn"),
    },
}


def route_refusal(description: str) -> dict[str, Any]:
    """`blp.alt_response` arguments for a refusal particular to one route, in the one error shape."""
    return {"description": description, "schema": ProblemSchema}


class TruthfulStatuses(BasePlugin):
    """Adds to every operation the statuses that follow from how its route is built."""

    def __init__(self, without_database: frozenset[str]):
        self.without_database = without_database

    def init_spec(self, spec) -> None:
        spec.components.schema("Problem", schema=ProblemSchema)
        for name, response in RESPONSES.items():
            spec.components.response(name, response)
        for name, scheme in SECURITY_SCHEMES.items():
            spec.components.security_scheme(name, scheme)

    def operation_helper(self, path=None, operations=None, rule=None, **kwargs) -> None:
        for method, operation in (operations or {}).items():
            responses = {str(status): response for status, response in operation.get("responses", {}).items()}
            if responses.get("422") == "UNPROCESSABLE_ENTITY":
                del responses["422"]  # flask-smorest's own for a bad query string: ours is the one error shape
            for status, response in self.implied(operation, rule).items():
                responses.setdefault(status, response)
            for (on_method, on_path, status), links in LINKS.items():
                if (on_method, on_path) == (method, path) and isinstance(responses.get(status), dict):
                    responses[status]["links"] = links
            operation["responses"] = dict(sorted(responses.items()))

    def implied(self, operation: dict[str, Any], rule) -> dict[str, str]:
        """The named responses an operation can give because of how its route is built."""
        implied = {}
        schemes = {name for requirement in operation.get("security", []) for name in requirement}
        if schemes:
            implied["401"] = "Unauthorized"
        if API_KEY in schemes:
            implied["403"] = "Forbidden"  # every power is one some role lacks
        if rule is not None and rule.arguments:
            implied["404"] = "NotFound"
        if "requestBody" in operation:
            operation["requestBody"]["required"] = True
            implied.update({"400": "MalformedBody", "413": "TooLarge", "422": "Invalid"})
        if any(isinstance(p, dict) and p.get("in") == "query" for p in operation.get("parameters", [])):
            implied["422"] = "Invalid"
        if rule is not None and rule.endpoint not in self.without_database:
            implied["503"] = "Unavailable"
        return implied


def make_api(app, without_database: frozenset[str]) -> Api:
    """The flask-smorest Api of `app`, documenting errors in the one shape and no catch-all `default` response
    (so a status an operation does not list is one it never gives)."""
    return ToolgateApi(app, spec_kwargs={"extra_plugins": [TruthfulStatuses(without_database)]})


class ToolgateApi(Api):
    ERROR_SCHEMA = ProblemSchema
    DEFAULT_ERROR_RESPONSE_NAME = None


def authenticated_by(scheme: str):
    """Document that a view takes the credential `scheme` (the decorator that checks it applies this)."""
    return Blueprint.doc(security=[{scheme: []}])
