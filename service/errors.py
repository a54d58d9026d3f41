"""Errors as values: one shape for every refusal, defined once.

A `ServiceError` carries an HTTP status, a stable code, a message and any violations (`service.catalogue`: one
broken rule each, with the catalogue's sentence); the API, the MCP server, the dashboard and the conformance kit all
render these same values.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from service.catalogue import MORE_VIOLATIONS, Violation, violation
from service.limits import MAX_VIOLATIONS


@dataclass
class ServiceError(Exception):
    """A refusal with an HTTP status, a stable code and a human sentence."""

    status: int
    code: str
    message: str
    violations: list[Violation] = field(default_factory=list)
    #: Seconds to wait before trying again, sent as `Retry-After` (429 and 503 carry one).
    retry_after: int | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)
        if len(self.violations) > MAX_VIOLATIONS:
            self.violations = [*self.violations[:MAX_VIOLATIONS - 1], MORE_VIOLATIONS]

    def to_dict(self) -> dict[str, Any]:
        """The one JSON error shape: every violation listed, or a single error naming the code."""
        errors = self.violations or [Violation(field="", rule=self.code, message=self.message)]
        return {"code": self.code, "message": self.message, "errors": [v.to_dict() for v in errors]}


#: What a 422 says broke its rules, above the list of them: a tool definition, a project's pins, an agent's one pin,
#: or any other request.
DEFINITION = "The definition breaks one or more rules."
PINS = "The project's pins break one or more rules."
PIN = "The pin breaks one or more rules."
REQUEST = "The request breaks one or more rules."


def invalid(violations: list[Violation], message: str = DEFINITION) -> ServiceError:
    """422 with every violated rule at once."""
    return ServiceError(422, "invalid", message, list(violations))


def conflict(violation: Violation) -> ServiceError:
    """409 for a uniqueness clash such as a taken tool name."""
    return ServiceError(409, violation.rule, violation.message, [violation])


def refusal(rule: str, status: int = 409, field: str = "") -> ServiceError:
    """A refusal of one catalogue rule, such as a lifecycle step the tool or project is not in, with its sentence."""
    v = violation(field, rule)
    return ServiceError(status, rule, v.message, [v])


def not_found(what: str = "resource") -> ServiceError:
    """404: missing, or another organization's (the two are never told apart)."""
    return ServiceError(404, "not-found", f"No such {what}.")


#: What a path no route matches answers, API and dashboard alike (werkzeug's stock sentence asked the reader to check
#: their spelling "if you entered the URL manually").
NO_ROUTE = "Nothing is at this address. Check it for a mistake, or start again from a link."


def no_route() -> ServiceError:
    """404 for a path no route matches."""
    return ServiceError(404, "not-found", NO_ROUTE)


def method_not_allowed(method: str, allowed: list[str]) -> ServiceError:
    """405 for a method the path's routes do not take, naming the ones they do (also sent as `Allow`)."""
    taken = sorted(set(allowed) - {"HEAD", "OPTIONS"}) or sorted(allowed)
    listed = taken[0] if len(taken) == 1 else f"{', '.join(taken[:-1])} or {taken[-1]}"
    return ServiceError(405, "method-not-allowed", f"This address does not take {method}; it takes {listed}.")


def role_key(role: str) -> str:
    """A key of that role, with its article: "A backend key", "An admin key", "An agent key"."""
    return f"{'An' if role[:1] in tuple('aeiou') else 'A'} {role} key"


def forbidden(role: str) -> ServiceError:
    """403: a key whose role may not do what it asked."""
    return ServiceError(403, "forbidden", f"{role_key(role)} may not do that.")


def unauthorized(message: str = "Missing or invalid credentials.") -> ServiceError:
    return ServiceError(401, "unauthorized", message)


def concurrent_change() -> ServiceError:
    """409 when the database refused a write because a concurrent one won."""
    return ServiceError(409, "conflict", "A concurrent change won; reload and try again.")


def precondition_failed() -> ServiceError:
    return ServiceError(
        412, "stale-draft", "The draft has changed since you read it; reload it and save again."
    )


def database_unavailable(retry_after: int) -> ServiceError:
    """503 when the database cannot serve right now: unreachable, connection lost, pool exhausted, or a conflict it
    aborted. Nothing was changed, unless a write had committed, whose answer is then given from what was committed."""
    return ServiceError(503, "database-unavailable", "The database is not answering; try again shortly.",
                        retry_after=retry_after)


def busy(retry_after: int) -> ServiceError:
    """503 when this process is past its capacity: a request waited its whole wait for a place at the work gate
    (service.gate) and was refused before doing anything."""
    return ServiceError(503, "busy", "The service is busy; try again shortly.", retry_after=retry_after)


def request_too_large(limit: int) -> ServiceError:
    """413 for a body past the service's bound (TOOLGATE_MAX_REQUEST_BYTES): refused before it is read."""
    return ServiceError(413, "request-too-large", f"The request body is larger than {limit} bytes, the most this "
                                                  "service takes.")


def request_timeout() -> ServiceError:
    """408 for a request whose head or body stopped arriving past its read deadline; its connection is closed."""
    return ServiceError(408, "request-timeout", "The request did not arrive in time; the connection is closed.")


def body_incomplete() -> ServiceError:
    """400 for a body that ended (the client closed, or it broke off) before the length it declared."""
    return ServiceError(400, "body-incomplete", "The request body ended before the length it declared.")


#: The status nginx logs for a request whose client closed the connection before the answer: no client reads it.
CLIENT_GONE_STATUS = 499


def client_gone() -> ServiceError:
    """499 when the client closed its connection before the answer (an import it gave up on): the work stopped and
    nothing was written. Nobody reads the answer; the log line and the metrics say what happened."""
    return ServiceError(CLIENT_GONE_STATUS, "client-gone", "The client closed the connection before the answer; the "
                                                           "work stopped and nothing was written.")


def approval_decided(status: str) -> ServiceError:
    """409 for a second decision of an approval: each is decided once, and nothing more is sent."""
    return ServiceError(409, "approval-decided", f"This call was already {status}; an approval is decided once, and "
                                                 "nothing was sent now.")


def approval_expired() -> ServiceError:
    """409 for a decision past an approval's expiry: the call was never sent, and now never will be."""
    return ServiceError(409, "approval-expired", "This approval has expired; nothing was sent. The model may ask "
                                                 "again.")


#: The codes of refusals for a turn paused for the person's approval (issue 19); each changes nothing.
APPROVALS_PENDING = "approvals-pending"
TURN_AWAITS_CONTINUE = "turn-awaits-continue"
NOTHING_TO_CONTINUE = "nothing-to-continue"


def approvals_pending(pending: list[Violation]) -> ServiceError:
    """409 for a message, or a continue, while the paused turn still awaits decisions: one violation per approval
    (field `approvals/<id>`, the path its decision is posted to)."""
    return ServiceError(409, APPROVALS_PENDING, "This conversation's turn is paused until the person decides each "
                                                "call awaiting approval; decide them, then continue the turn.",
                        list(pending))


def turn_awaits_continue() -> ServiceError:
    """409 for a new message while a paused turn's approvals are all decided but the turn has not gone on."""
    return ServiceError(409, TURN_AWAITS_CONTINUE, "This conversation's turn paused for approvals that are now all "
                                                   "decided; continue it (a message without text) before sending a "
                                                   "new message.")


def nothing_to_continue() -> ServiceError:
    """409 for a continue (a message without text) when no turn of the conversation awaits approval."""
    return ServiceError(409, NOTHING_TO_CONTINUE, "No turn of this conversation is paused for approval, so there is "
                                                  "nothing to continue; send the person's message as `text`.")


def not_entitled() -> ServiceError:
    """403 for an approval by a session token without the entitlement the held call's tool requires."""
    return ServiceError(403, "not-entitled", "This session token does not carry the entitlement the tool requires; "
                                             "nothing was sent.")


#: The code of a refusal for an organization's share of calls in flight (a whole turn stops with it as its reason).
TOO_MANY_CALLS = "too-many-calls"


def too_many_calls(limit: int, retry_after: int) -> ServiceError:
    """429 when an organization already has its share of tool calls in flight on this instance."""
    return ServiceError(429, TOO_MANY_CALLS, f"This organization already has {limit} tool calls in flight here, "
                                               "its share; try again shortly.", retry_after=retry_after)
