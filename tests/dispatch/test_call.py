"""A whole call: arguments checked, the assertion minted only if something will be sent."""
import json

from service.definition import Parameter, ToolDefinition
from service.dispatch import call_tool, compile_definition


def orders_tool(endpoint):
    return compile_definition(ToolDefinition(
        "get_orders", "d", "GET", endpoint.url("/echo/{subject}/orders"), scope="per_user",
        parameters=(Parameter("subject", "string", "path"), Parameter("status", "string", "query", required=False)),
    ))


def test_a_valid_call_is_signed_once_and_sent_for_the_sessions_subject(endpoint, loopback_guard):
    minted = []

    def sign():
        minted.append("header.claims.signature")
        return minted[-1]
    outcome = call_tool(orders_tool(endpoint), {"status": "open", "subject": "bob"}, subject="alice",
                        guard=loopback_guard, sign=sign)
    seen = json.loads(outcome.output)
    assert seen["target"] == "/echo/alice/orders?status=open"
    assert ["Authorization", "Bearer header.claims.signature"] in seen["headers"]
    assert len(minted) == 1


def test_invalid_arguments_call_nothing_and_sign_nothing(endpoint, loopback_guard):
    before = len(endpoint.received)

    def sign():
        raise AssertionError("nothing should be signed")
    outcome = call_tool(orders_tool(endpoint), {"status": True}, subject="alice", guard=loopback_guard, sign=sign)
    assert (outcome.kind, outcome.http_code) == ("invalid-arguments", None)
    assert outcome.detail == "status: expected string, got boolean"
    assert outcome.to_result() == {"error": {"status": "error", "kind": "invalid-arguments"}}
    assert len(endpoint.received) == before
